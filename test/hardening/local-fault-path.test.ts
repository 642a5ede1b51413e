/**
 * The store's fault path end to end: `npm start` (the deployable bundle behind the local API, in a
 * child process, with the shipped store settings) with AWS_ENDPOINT_URL_DYNAMODB pointing at a
 * loopback DynamoDB that throttles, then hangs, then recovers. Real HTTP in, real client out.
 */
import { afterAll, beforeAll, expect, test } from "vitest";
import { type LocalDynamoDb, startDynalite } from "../../local/dynamodb.ts";
import { mintLocalToken } from "../../local/local-issuer.ts";
import { DEFAULT_TABLE_NAME } from "../../local/local-settings.ts";
import { type FaultyDynamoDb, startFaultyDynamoDb } from "../support/faulty-dynamodb.ts";
import { type RunningServer, startServer, tempDataDir } from "../support/local-run.ts";
import { readStoredItem } from "../support/stored-item.ts";

// The shipped store deadline (STORE_DEADLINE_MS defaults to 3000), plus HTTP and scheduling slack.
const ANSWER_BOUND_MS = 3000 + 1500;

let dynamoDb: LocalDynamoDb;
let faulty: FaultyDynamoDb;
let dataDir: string;
let server: RunningServer;
let token: string;

beforeAll(async () => {
  dynamoDb = await startDynalite();
  faulty = await startFaultyDynamoDb(dynamoDb.endpoint);
  faulty.script([], "proxy"); // the server creates its table through it on start
  dataDir = await tempDataDir();
  server = await startServer({ PLANTS_DATA_DIR: dataDir, AWS_ENDPOINT_URL_DYNAMODB: faulty.url });
  token = await mintLocalToken(dataDir);
});

afterAll(async () => {
  await server?.stop();
  await faulty?.close();
  await dynamoDb?.close();
  // The data dir (and the server, if a test failed before stopping it) go in local-run.ts's cleanUp.
});

async function post(body: string): Promise<{ response: Response; text: string; elapsedMs: number }> {
  const startedAt = performance.now();
  const response = await fetch(`${server.url}/plants`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body,
  });
  const text = await response.text();
  return { response, text, elapsedMs: performance.now() - startedAt };
}

const storedItem = (id: string) => readStoredItem(dynamoDb.endpoint, DEFAULT_TABLE_NAME, id);

test("npm start on a throttling, then hanging, store answers 503 with Retry-After in time, then recovers", async () => {
  for (const fault of ["throttle", "hang"] as const) {
    faulty.script([], fault);
    faulty.clearRequests();
    const { response, text, elapsedMs } = await post('{"id":77,"name":"Fern"}');
    expect(response.status, `${fault}: ${text}`).toBe(503);
    expect(response.headers.get("content-type")).toBe("application/json");
    expect(response.headers.get("retry-after")).toMatch(/^[1-9]\d*$/);
    expect(JSON.parse(text)).toEqual({ error: 503, message: expect.any(String) });
    expect(elapsedMs).toBeLessThan(ANSWER_BOUND_MS);
    expect(faulty.requests().filter((request) => request.operation === "PutItem").length).toBeGreaterThan(1);
    expect(await storedItem("77")).toBeUndefined();
  }

  faulty.script([], "proxy");
  const { response, text } = await post('{"id":77,"name":"Fern"}');
  expect(response.status, text).toBe(200);
  expect(JSON.parse(text)).toEqual({ name: "Fern" });
  expect(await storedItem("77")).toEqual({ id: { N: "77" }, name: { S: "Fern" } });
  expect(server.output()).not.toContain(token);
}, 60_000);
