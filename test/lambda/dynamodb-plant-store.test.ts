import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PlantConflictError } from "../../lambda/errors.ts";
import { type CreateOutcome, createPlant } from "../../lambda/plants/create-plant.ts";
import { createDynamoDbPlantStore } from "../../lambda/store/dynamodb-plant-store.ts";
import type { PlantStore } from "../../lambda/store/plant-store.ts";
import {
  callDynamoDb,
  ensurePlantsTable,
  LOCAL_CREDENTIALS,
  LOCAL_REGION,
  type LocalDynamoDb,
  startDynalite,
} from "../../local/dynamodb.ts";

let dynamoDb: LocalDynamoDb;
let store: PlantStore;

beforeAll(async () => {
  dynamoDb = await startDynalite();
  await ensurePlantsTable(dynamoDb.endpoint, "plants");
  store = createDynamoDbPlantStore({
    tableName: "plants",
    region: LOCAL_REGION,
    endpoint: dynamoDb.endpoint,
    credentials: { ...LOCAL_CREDENTIALS, sessionToken: undefined },
    deadlineMs: 2000,
    attemptTimeoutMs: 1000,
  });
});
afterAll(async () => {
  await dynamoDb.close();
});

describe("the DynamoDB plant store, against dynalite", () => {
  it("writes an allow-listed item with the id as an exact Number", async () => {
    const plant = { id: -9223372036854775808n, name: "Fern", tag: "indoor" };
    expect(await store.putIfAbsent(plant)).toEqual({ created: true });
    const { body } = await callDynamoDb(dynamoDb.endpoint, "GetItem", {
      TableName: "plants",
      Key: { id: { N: "-9223372036854775808" } },
    });
    expect(body.Item).toEqual({
      id: { N: "-9223372036854775808" },
      name: { S: "Fern" },
      tag: { S: "indoor" },
    });
  });

  it("never overwrites: a second put reports the plant already stored", async () => {
    await store.putIfAbsent({ id: 7n, name: "Fern" });
    expect(await store.putIfAbsent({ id: 7n, name: "Rose", tag: "red" })).toEqual({
      created: false,
      existing: { id: 7n, name: "Fern" },
    });
  });

  it("lets exactly one of many concurrent creates of one id win", async () => {
    const names = Array.from({ length: 20 }, (_, index) => `Plant ${index}`);
    const outcomes = await Promise.allSettled(names.map((name) => createPlant(store, { id: 42n, name })));
    const winners = outcomes.filter((outcome) => outcome.status === "fulfilled");
    expect(winners).toHaveLength(1);
    for (const outcome of outcomes) {
      if (outcome.status === "rejected") expect(outcome.reason).toBeInstanceOf(PlantConflictError);
    }
    const { body } = await callDynamoDb(dynamoDb.endpoint, "GetItem", {
      TableName: "plants",
      Key: { id: { N: "42" } },
      ConsistentRead: true,
    });
    expect(body.Item).toEqual({
      id: { N: "42" },
      name: { S: (winners[0] as PromiseFulfilledResult<CreateOutcome>).value.plant.name },
    });
  });

  it("answers identical concurrent creates all alike", async () => {
    const results = await Promise.all(
      Array.from({ length: 10 }, () => createPlant(store, { id: 43n, name: "Same", tag: "t" })),
    );
    expect(results.map((result) => result.plant)).toEqual(
      Array.from({ length: 10 }, () => ({ name: "Same", tag: "t" })),
    );
    expect(results.filter((result) => !result.replayed)).toHaveLength(1);
  });
});

describe("the DynamoDB plant store, against DynamoDB's own conflict answer", () => {
  // dynalite ignores ReturnValuesOnConditionCheckFailure; DynamoDB returns the old item with the
  // conflict, which spares the extra read. A loopback endpoint answers as DynamoDB does.
  it("takes the existing plant from the failed write, without reading it again", async () => {
    const requests: { target: string; body: Record<string, unknown> }[] = [];
    const server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on("data", (chunk: Buffer) => chunks.push(chunk));
      request.on("end", () => {
        requests.push({
          target: String(request.headers["x-amz-target"]),
          body: JSON.parse(Buffer.concat(chunks).toString("utf8")) as Record<string, unknown>,
        });
        response.writeHead(400, { "content-type": "application/x-amz-json-1.0" }).end(
          JSON.stringify({
            __type: "com.amazonaws.dynamodb.v20120810#ConditionalCheckFailedException",
            message: "The conditional request failed",
            Item: { id: { N: "9007199254740993" }, name: { S: "Fern" }, tag: { S: "indoor" } },
          }),
        );
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const dynamoDbLike = createDynamoDbPlantStore({
      tableName: "plants",
      region: LOCAL_REGION,
      endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      credentials: { ...LOCAL_CREDENTIALS, sessionToken: undefined },
      deadlineMs: 2000,
      attemptTimeoutMs: 1000,
    });
    try {
      const outcome = await dynamoDbLike.putIfAbsent({ id: 9007199254740993n, name: "Rose" });
      expect(outcome).toEqual({
        created: false,
        existing: { id: 9007199254740993n, name: "Fern", tag: "indoor" },
      });
      expect(requests.map(({ target }) => target)).toEqual(["DynamoDB_20120810.PutItem"]);
      expect(requests[0]?.body).toMatchObject({
        ConditionExpression: "attribute_not_exists(id)",
        ReturnValuesOnConditionCheckFailure: "ALL_OLD",
      });
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });
});
