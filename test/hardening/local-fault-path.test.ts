/**
 * The store's fault path end to end: `npm start` (the deployable bundle behind the local API, in a
 * child process, with the shipped store settings) with AWS_ENDPOINT_URL_DYNAMODB pointing at a
 * loopback DynamoDB that throttles, then loses its answers after writing, then recovers. Real HTTP in,
 * real client out. (A hanging store, which only a timer ends, is played on the store's injected clock
 * in store-faults.test.ts.)
 */
import { afterAll, beforeAll, expect, test } from "vitest";
import type { LocalDynamoDb } from "../../local/dynamodb.ts";
import { mintLocalToken } from "../../local/local-issuer.ts";
import { DEFAULT_TABLE_NAME } from "../../local/local-settings.ts";
import type { FaultyDynamoDb } from "../support/faulty-dynamodb.ts";
import { type FaultyLocalRun, startLocalRunOnFaultyStore } from "../support/faulty-local-run.ts";
import type { RunningServer } from "../support/local-run.ts";
import { readStoredItem } from "../support/stored-item.ts";

let dynamoDb: LocalDynamoDb;
let faulty: FaultyDynamoDb;
let server: RunningServer;
let token: string;
let run: FaultyLocalRun | undefined;

beforeAll(async () => {
  run = await startLocalRunOnFaultyStore();
  ({ dynamoDb, faulty, server } = run);
  token = await mintLocalToken(run.dataDir);
});

afterAll(async () => {
  await run?.close();
});

async function post(body: string): Promise<{ response: Response; text: string }> {
  const response = await fetch(`${server.url}/plants`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body,
  });
  return { response, text: await response.text() };
}

const storedItem = (id: string) => readStoredItem(dynamoDb.endpoint, DEFAULT_TABLE_NAME, id);

/** A 503 with Retry-After, as JSON, and its message. */
function expectUnavailable({ response, text }: { response: Response; text: string }): string {
  expect(response.status, text).toBe(503);
  expect(response.headers.get("content-type")).toBe("application/json");
  expect(response.headers.get("retry-after")).toMatch(/^[1-9]\d*$/);
  const body = JSON.parse(text) as { error: number; message: string };
  expect(body).toEqual({ error: 503, message: expect.any(String) });
  return body.message;
}

test("npm start on a throttling store says nothing was written; on one that loses its answers, that the plant may have been stored; sent again, both answer 200", async () => {
  faulty.script([], "throttle");
  expect(expectUnavailable(await post('{"id":77,"name":"Fern"}'))).toMatch(/nothing was written/);
  expect(faulty.requests().filter((request) => request.operation === "PutItem").length).toBeGreaterThan(1);
  expect(await storedItem("77")).toBeUndefined();

  faulty.script([], "proxy-then-reset");
  expect(expectUnavailable(await post('{"id":78,"name":"Ivy"}'))).toMatch(
    /may have been stored; sending the same request again is safe/,
  );
  expect(await storedItem("78")).toEqual({ id: { N: "78" }, name: { S: "Ivy" } });

  faulty.script([], "proxy");
  for (const [id, name] of [
    ["77", "Fern"],
    ["78", "Ivy"],
  ] as const) {
    const { response, text } = await post(`{"id":${id},"name":"${name}"}`);
    expect(response.status, text).toBe(200);
    expect(JSON.parse(text)).toEqual({ name });
    expect(await storedItem(id)).toEqual({ id: { N: id }, name: { S: name } });
  }
  expect(server.output()).not.toContain(token);
});
