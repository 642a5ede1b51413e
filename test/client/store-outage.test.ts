/**
 * The client through `npm start` when the store fails: the real handler answers 503 with Retry-After
 * because the DynamoDB it writes to (AWS_ENDPOINT_URL_DYNAMODB, a loopback endpoint in front of dynalite)
 * throttles or loses its answers, for as many of the client's requests as a test says. The client waits on
 * the one fake clock (test/support/fake-clock.ts), which records its waits and skips them: what Retry-After
 * asked for is asserted, never wall-clock time.
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ClientCredentials, createPlantStoreClient, PlantStoreError } from "../../client/index.ts";
import type { LocalDynamoDb } from "../../local/dynamodb.ts";
import { DEFAULT_TABLE_NAME } from "../../local/local-settings.ts";
import { FakeClock } from "../support/fake-clock.ts";
import type { Fault, FaultyDynamoDb } from "../support/faulty-dynamodb.ts";
import { type FaultyLocalRun, startLocalRunOnFaultyStore } from "../support/faulty-local-run.ts";
import type { RunningServer } from "../support/local-run.ts";
import { readStoredItem } from "../support/stored-item.ts";

let dynamoDb: LocalDynamoDb;
let faulty: FaultyDynamoDb;
let server: RunningServer;
let local: ClientCredentials;
let run: FaultyLocalRun | undefined;

beforeAll(async () => {
  run = await startLocalRunOnFaultyStore();
  ({ dynamoDb, faulty, server } = run);
  local = JSON.parse(await readFile(join(run.dataDir, "client.json"), "utf8")) as ClientCredentials;
});

afterAll(async () => {
  await run?.close();
});

const storedItem = (id: string) => readStoredItem(dynamoDb.endpoint, DEFAULT_TABLE_NAME, id);

/**
 * The client's fetch, which sets how the store behaves for each POST /plants before sending it (`storeFor`
 * the 1st, 2nd, … request: every store call the handler makes for that request gets that fault), and
 * records what the API answered each one.
 */
function storeFaultsPerRequest(storeFor: (request: number) => Fault) {
  const answers: { status: number; retryAfter: string | null }[] = [];
  const fetch = async (url: string, init: RequestInit) => {
    const isCreate = new URL(url).pathname === "/plants";
    if (isCreate) faulty.script([], storeFor(answers.length + 1));
    const response = await globalThis.fetch(url, init);
    if (isCreate) answers.push({ status: response.status, retryAfter: response.headers.get("retry-after") });
    return response;
  };
  return { fetch, answers };
}

/**
 * The client with its waits skipped. Time moves only by them: a slow machine never turns a slow answer
 * into a retry, whose count is asserted.
 */
function clientWith(fetch: (url: string, init: RequestInit) => Promise<Response>) {
  const clock = new FakeClock();
  const client = createPlantStoreClient({ baseUrl: server.url, credentials: local, fetch, clock });
  return { client, clock };
}

const UNAVAILABLE = { status: 503, retryAfter: "1" };

describe("a store that fails for the first requests", () => {
  it("gives the plant after two 503s with Retry-After: 1, in 3 requests, having waited 1 s before each retry", async () => {
    const { fetch, answers } = storeFaultsPerRequest((request) => (request <= 2 ? "throttle" : "proxy"));
    const { client, clock } = clientWith(fetch);
    faulty.clearRequests();

    const plant = await client.createPlant({ id: 9007199254740993n, name: "Fern", tag: "fern" });

    expect(plant).toEqual({ name: "Fern", tag: "fern" });
    expect(answers).toEqual([UNAVAILABLE, UNAVAILABLE, { status: 200, retryAfter: null }]);
    expect(clock.sleeps).toEqual([1000, 1000]);
    expect(await storedItem("9007199254740993")).toEqual({
      id: { N: "9007199254740993" },
      name: { S: "Fern" },
      tag: { S: "fern" },
    });
    // The 503s were the handler's answer to a throttled store: it tried to write for each of them.
    const throttledWrites = faulty
      .requests()
      .filter((request) => request.operation === "PutItem" && request.fault === "throttle");
    expect(throttledWrites.length).toBeGreaterThanOrEqual(2);
  }, 60_000);
});

describe("a store that fails for every request: the last 503, saying what the handler knows of the write", () => {
  it("throttled: nothing was written", async () => {
    const { fetch, answers } = storeFaultsPerRequest(() => "throttle");
    const { client, clock } = clientWith(fetch);

    const error = await client.createPlant({ id: 9201n, name: "Fern" }).catch((thrown: unknown) => thrown);

    expect(error).toBeInstanceOf(PlantStoreError);
    expect(error).toMatchObject({
      kind: "unavailable",
      status: 503,
      serverMessage: "the plant store is unavailable; nothing was written, retry later",
      retryAfterSeconds: 1,
      attempts: 3,
      requestId: expect.any(String),
    });
    expect((error as PlantStoreError).message).toBe(
      `POST ${server.url}/plants answered 503: the plant store is unavailable; nothing was written, retry later`,
    );
    expect(answers).toEqual([UNAVAILABLE, UNAVAILABLE, UNAVAILABLE]);
    expect(clock.sleeps).toEqual([1000, 1000]);
    expect(await storedItem("9201")).toBeUndefined();
  }, 60_000);

  it("answers lost after the write: the plant may have been stored, and it was; sent again, it answers the plant", async () => {
    const { fetch, answers } = storeFaultsPerRequest((request) =>
      request <= 3 ? "proxy-then-reset" : "proxy",
    );
    const { client, clock } = clientWith(fetch);

    const error = await client.createPlant({ id: 9202n, name: "Ivy" }).catch((thrown: unknown) => thrown);

    expect(error).toBeInstanceOf(PlantStoreError);
    expect(error).toMatchObject({ status: 503, retryAfterSeconds: 1, attempts: 3 });
    expect((error as PlantStoreError).message).toContain(
      "the plant may have been stored; sending the same request again is safe",
    );
    expect(answers).toEqual([UNAVAILABLE, UNAVAILABLE, UNAVAILABLE]);
    expect(clock.sleeps).toEqual([1000, 1000]);
    expect(await storedItem("9202")).toEqual({ id: { N: "9202" }, name: { S: "Ivy" } });

    expect(await client.createPlant({ id: 9202n, name: "Ivy" })).toEqual({ name: "Ivy" });
    expect(answers.at(-1)).toEqual({ status: 200, retryAfter: null });
  }, 60_000);
});
