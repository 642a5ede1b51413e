import { readdir } from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { callDynamoDb, type LocalDynamoDb, startDynalite } from "../../local/dynamodb.ts";
import { mintLocalToken } from "../../local/local-issuer.ts";
import { type RunningServer, startServer, tempDataDir } from "../support/local-run.ts";

describe("npm start with AWS_ENDPOINT_URL_DYNAMODB", () => {
  let dynamoDb: LocalDynamoDb;
  let dataDir: string;
  let server: RunningServer;

  beforeAll(async () => {
    dynamoDb = await startDynalite();
    dataDir = await tempDataDir();
    server = await startServer({
      PLANTS_DATA_DIR: dataDir,
      AWS_ENDPOINT_URL_DYNAMODB: dynamoDb.endpoint,
      PLANTS_TABLE: "plants-elsewhere",
    });
  });

  afterAll(async () => {
    await server?.stop();
    await dynamoDb?.close();
  });

  it("writes to that endpoint's table, creating it, and opens no embedded store", async () => {
    const response = await fetch(`${server.url}/plants`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${await mintLocalToken(dataDir)}`,
        "content-type": "application/json",
      },
      body: '{"id":7,"name":"Aloe","tag":"succulent"}',
    });
    expect(response.status).toBe(200);

    const { body } = await callDynamoDb(dynamoDb.endpoint, "GetItem", {
      TableName: "plants-elsewhere",
      Key: { id: { N: "7" } },
    });
    expect(body.Item).toMatchObject({ name: { S: "Aloe" }, tag: { S: "succulent" } });
    expect(await readdir(dataDir)).not.toContain("dynamodb");
  });
});
