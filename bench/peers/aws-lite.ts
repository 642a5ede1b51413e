/**
 * A peer: the same create written with aws-lite's DynamoDB plugin (PutItem, never overwriting), the
 * caller's token checked as the issuer-free floor checks it (the key set delivered in JWKS_JSON, imported
 * at init), before the write. The client is made at init (top-level await) from the region, credentials
 * and store endpoint in the environment, and cannot open the store's connection before its first call.
 * Bundled at bench time (bench/bundles.ts) from the dev dependencies.
 */
import awsLite from "@aws-lite/client";
import dynamodb from "@aws-lite/dynamodb";
import {
  deliveredKeys,
  type FloorAnswer,
  type FloorEvent,
  floorAnswer,
  newPlantId,
  setting,
  verifyToken,
} from "../floors.ts";

const { DynamoDB } = (await awsLite({
  region: setting("AWS_REGION"),
  endpoint: setting("AWS_ENDPOINT_URL_DYNAMODB"),
  plugins: [dynamodb],
  autoloadPlugins: false,
})) as unknown as { DynamoDB: { PutItem(input: Record<string, unknown>): Promise<unknown> } };

const keyFor = deliveredKeys();

export async function handler(event: FloorEvent): Promise<FloorAnswer> {
  return floorAnswer(verifyToken(event, keyFor).then(() => putItem(event)));
}

async function putItem(event: FloorEvent): Promise<void> {
  await DynamoDB.PutItem({
    TableName: setting("TABLE_NAME"),
    Item: { id: Number(newPlantId(event)), name: "Fern" },
    ConditionExpression: "attribute_not_exists(id)",
  });
}
