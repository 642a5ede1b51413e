import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { callDynamoDb, ensurePlantsTable, type LocalDynamoDb, startDynalite } from "../../local/dynamodb.ts";

describe("the local store (dynalite) and web pages", () => {
  let dynamoDb: LocalDynamoDb;

  beforeAll(async () => {
    dynamoDb = await startDynalite();
    await ensurePlantsTable(dynamoDb.endpoint, "plants");
  });
  afterAll(async () => {
    await dynamoDb?.close();
  });

  const page = { origin: "https://page.example" };
  const putItem = {
    "content-type": "application/x-amz-json-1.0",
    "x-amz-target": "DynamoDB_20120810.PutItem",
  };
  const planted = { TableName: "plants", Item: { id: { N: "666" }, name: { S: "planted by a page" } } };

  it("refuses a page's preflight, so no browser lets the page call it", async () => {
    const preflight = await fetch(dynamoDb.endpoint, {
      method: "OPTIONS",
      headers: {
        ...page,
        "access-control-request-method": "POST",
        "access-control-request-headers": "content-type,x-amz-target",
      },
    });
    expect(preflight.status).toBe(403);
    expect(preflight.headers.get("access-control-allow-origin")).toBeNull();
    await preflight.body?.cancel();
  });

  it("refuses a call that carries an Origin and writes nothing, while the store's own clients are served", async () => {
    const call = await fetch(dynamoDb.endpoint, {
      method: "POST",
      headers: { ...page, ...putItem },
      body: JSON.stringify(planted),
    });
    expect(call.status).toBe(403);
    expect(await call.json()).toMatchObject({ __type: expect.stringMatching(/AccessDeniedException$/) });
    const stored = await callDynamoDb(dynamoDb.endpoint, "GetItem", {
      TableName: "plants",
      Key: { id: { N: "666" } },
      ConsistentRead: true,
    });
    expect(stored).toMatchObject({ status: 200, body: {} });
    expect(stored.body.Item).toBeUndefined();
  });
});
