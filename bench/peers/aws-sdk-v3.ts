/**
 * A peer: the same create written with the AWS SDK v3 DynamoDBClient (PutItem, never overwriting), the
 * caller's token checked as the issuer-free floor checks it (the key set delivered in JWKS_JSON, imported
 * at init), before the write. The client is made at init, as AWS advises; it reads the region,
 * credentials and AWS_ENDPOINT_URL_DYNAMODB from the environment, and cannot open the store's connection
 * before its first call. Bundled at bench time (bench/bundles.ts) from the dev dependency.
 */
import { DynamoDBClient, PutItemCommand } from "@aws-sdk/client-dynamodb";
import {
  deliveredKeys,
  type FloorAnswer,
  type FloorEvent,
  floorAnswer,
  newPlantId,
  setting,
  verifyToken,
} from "../floors.ts";

const client = new DynamoDBClient({});

const keyFor = deliveredKeys();

export async function handler(event: FloorEvent): Promise<FloorAnswer> {
  return floorAnswer(verifyToken(event, keyFor).then(() => putItem(event)));
}

async function putItem(event: FloorEvent): Promise<void> {
  await client.send(
    new PutItemCommand({
      TableName: setting("TABLE_NAME"),
      Item: { id: { N: newPlantId(event) }, name: { S: "Fern" } },
      ConditionExpression: "attribute_not_exists(id)",
    }),
  );
}
