/**
 * Store faults through the real DynamoDB client: a loopback endpoint in front of dynalite answers
 * with throttling, server errors, hangs, resets, garbage, or loses the answer after the write.
 * The handler answers 503 with Retry-After, says whether the plant may have been stored, writes
 * nothing partial or twice, and the next request works once the fault clears. Time is the store's
 * injected clock: a backoff passes at once, and an attempt times out when the endpoint has taken its
 * request and will not answer, so no test waits for a timer.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test } from "vitest";
import { readConfig } from "../../lambda/config.ts";
import { DEFAULT_STORE_DEADLINE_MS } from "../../lambda/defaults.ts";
import { productionDependencies } from "../../lambda/dependencies.ts";
import type { ApiError, WriteOutcome } from "../../lambda/errors.ts";
import type { ApiGatewayResult } from "../../lambda/http/api-gateway.ts";
import { createHandler, type Handler } from "../../lambda/http/create-handler.ts";
import { createPlant } from "../../lambda/plants/create-plant.ts";
import { createDynamoDbPlantStore, type DynamoDbSettings } from "../../lambda/store/dynamodb-plant-store.ts";
import { callDynamoDb, LOCAL_IDENTITY } from "../../local/dynamodb.ts";
import { apiGatewayEvent } from "../../support/events.ts";
import { type Harness, startHarness, TEST_TABLE } from "../../support/harness.ts";
import { expectErrorAnswer, expectRetryAfter } from "../support/answers.ts";
import { FakeClock } from "../support/fake-clock.ts";
import { type Fault, type FaultyDynamoDb, startFaultyDynamoDb } from "../support/faulty-dynamodb.ts";
import { withLogs } from "../support/log-capture.ts";
import { readStoredItem } from "../support/stored-item.ts";

let harness: Harness;
let faulty: FaultyDynamoDb;
let handler: Handler;
let token: string;
let nextId = 1000;

/**
 * The store's time on cue: `now` moves only by the backoffs, which pass at once, and by an attempt's
 * timeout, which fires when the endpoint reports a request it will not answer.
 */
function cuedClock(endpoint: FaultyDynamoDb, options: { still?: boolean } = {}): FakeClock {
  const clock = new FakeClock(options);
  endpoint.onUnanswered(() => clock.next());
  return clock;
}

/** A store of its own on the faulty endpoint (a full retry quota), on the cued clock unless told otherwise. */
function storeBehindFaults(settings: Partial<DynamoDbSettings> = {}) {
  return createDynamoDbPlantStore({
    ...LOCAL_IDENTITY,
    endpoint: faulty.url,
    tableName: TEST_TABLE,
    deadlineMs: DEFAULT_STORE_DEADLINE_MS,
    attemptTimeoutMs: 1000,
    clock: cuedClock(faulty),
    random: () => 0.5,
    ...settings,
  });
}

beforeAll(async () => {
  harness = await startHarness();
  faulty = await startFaultyDynamoDb(harness.dynamoDb.endpoint);
  const config = readConfig({ ...harness.environment, AWS_ENDPOINT_URL_DYNAMODB: faulty.url });
  handler = createHandler({ ...productionDependencies(config), store: storeBehindFaults() });
  token = await harness.issuer.mint();
});

afterAll(async () => {
  await faulty.close();
  await harness.close();
});

beforeEach(() => {
  faulty.script([], "proxy");
  faulty.clearRequests();
});

afterEach(() => {
  // Every call, retries included, is signed as DynamoDB checks it.
  expect(faulty.requests().filter(({ signatureRefusal }) => signatureRefusal !== undefined)).toEqual([]);
});

function create(id: number, name = "Fern"): Promise<ApiGatewayResult> {
  return handler(apiGatewayEvent("2.0", { token, body: JSON.stringify({ id, name }) }));
}

const storedItem = (id: number) => readStoredItem(harness.dynamoDb.endpoint, TEST_TABLE, id);

async function storedCount(): Promise<number> {
  const { body } = await callDynamoDb(harness.dynamoDb.endpoint, "Scan", {
    TableName: TEST_TABLE,
    Select: "COUNT",
  });
  return body.Count as number;
}

const MESSAGES: Record<WriteOutcome, RegExp> = {
  "not-written": /nothing was written/,
  unknown: /may have been stored; sending the same request again is safe/,
};

/** A 503 with Retry-After whose message says what is known of the write, and nothing else. */
function expectUnavailable(result: ApiGatewayResult, outcome: WriteOutcome): void {
  const { message } = expectErrorAnswer(result, 503);
  expectRetryAfter(result);
  expect(message).toMatch(MESSAGES[outcome]);
  expect(message).not.toMatch(MESSAGES[outcome === "unknown" ? "not-written" : "unknown"]);
}

/** Every write the function sent was conditional: it can never overwrite a plant. */
function expectOnlyConditionalPuts(): void {
  const puts = faulty.requests().filter((request) => request.operation === "PutItem");
  expect(puts.length).toBeGreaterThan(0);
  for (const { body } of puts) expect(body.ConditionExpression).toBe("attribute_not_exists(id)");
}

/** What a store that keeps failing so can know of its write: refused before it applied, or maybe applied. */
const persistentFaults: [Fault, WriteOutcome][] = [
  ["throttle", "not-written"],
  ["provisioned-throughput", "not-written"],
  ["status-500", "unknown"],
  ["status-503", "unknown"],
  ["html-502", "unknown"],
  ["hang", "unknown"],
  ["reset", "unknown"],
  ["malformed", "unknown"],
  ["truncated", "unknown"],
  ["null-500", "unknown"],
];

describe("a store that keeps failing", () => {
  test.each(persistentFaults)(
    "%s: 503 with Retry-After saying the write is %s, nothing written, then recovery",
    async (fault, outcome) => {
      const id = nextId++;
      const countBefore = await storedCount();
      faulty.script([], fault);

      expectUnavailable(await create(id), outcome);
      const attempts = faulty.requests().filter((request) => request.operation === "PutItem").length;
      expect(attempts).toBeGreaterThan(1); // retried, not given up at once
      expect(await storedItem(id)).toBeUndefined();
      expect(await storedCount()).toBe(countBefore);

      faulty.script([], "proxy");
      const recovered = await create(id);
      expect(recovered.statusCode).toBe(200);
      expect(await storedItem(id)).toEqual({ id: { N: String(id) }, name: { S: "Fern" } });
      expect(await storedCount()).toBe(countBefore + 1);
      expectOnlyConditionalPuts();
    },
  );

  test("one attempt that may have applied decides: a 500, then throttling, says the plant may have been stored", async () => {
    faulty.script(["status-500"], "throttle");
    expectUnavailable(await create(nextId++), "unknown");
    faulty.script(["throttle"], "throttle");
    expectUnavailable(await create(nextId++), "not-written");
  });

  test("a store that cannot be reached: nothing was written", async () => {
    const closed = await startFaultyDynamoDb(harness.dynamoDb.endpoint);
    const url = closed.url;
    await closed.close();
    const failure = await storeBehindFaults({ endpoint: url })
      .putIfAbsent({ id: BigInt(nextId++), name: "Fern" })
      .catch((error: unknown) => error);
    expect(failure).toMatchObject({ code: "StoreUnavailable" });
    expect((failure as ApiError).message).toMatch(MESSAGES["not-written"]);
  });
});

describe("a store that fails for a moment", () => {
  test.each(persistentFaults.map(([fault]) => fault))(
    "%s twice, then fine: the retries create the plant once",
    async (fault) => {
      const id = nextId++;
      faulty.script([fault, fault], "proxy");
      const result = await create(id, "Basil");
      expect(result.statusCode).toBe(200);
      expect(JSON.parse(result.body)).toEqual({ name: "Basil" });
      expect(await storedItem(id)).toEqual({ id: { N: String(id) }, name: { S: "Basil" } });
      expectOnlyConditionalPuts();
    },
  );
});

describe("an answer lost after the write", () => {
  test.each<Fault>(["proxy-then-hang", "proxy-then-reset"])(
    "%s once: the retry finds its own write, answers 200 and counts it created, one item",
    async (fault) => {
      const id = nextId++;
      const countBefore = await storedCount();
      faulty.script([fault], "proxy");
      const result = await create(id, "Mint");
      expect(result.statusCode).toBe(200);
      expect(await storedItem(id)).toEqual({ id: { N: String(id) }, name: { S: "Mint" } });
      expect(await storedCount()).toBe(countBefore + 1);
      expectOnlyConditionalPuts();

      // The same, through createPlant: the write was this request's, not a replay of an earlier one.
      faulty.script([fault], "proxy");
      const outcome = await createPlant(storeBehindFaults(), { id: BigInt(nextId++), name: "Mint" });
      expect(outcome.replayed).toBe(false);
    },
  );

  test.each<Fault>(["proxy-then-hang", "proxy-then-reset"])(
    "%s every time: 503 saying the plant may have been stored, the one write intact, and a retry by the caller answers 200",
    async (fault) => {
      const id = nextId++;
      faulty.script([], fault);
      expectUnavailable(await create(id, "Mint"), "unknown");
      faulty.script([], "proxy");
      expect((await create(id, "Mint")).statusCode).toBe(200);
      expect((await create(id, "Other")).statusCode).toBe(409);
      expect(await storedItem(id)).toEqual({ id: { N: String(id) }, name: { S: "Mint" } });
      expectOnlyConditionalPuts();
    },
  );
});

describe("a write reset on a kept-alive connection", () => {
  test("it may have been received: retried, then throttled, 503 saying the plant may have been stored", async () => {
    expect((await create(nextId++)).statusCode).toBe(200); // leaves a kept-alive connection to reuse
    const connectionsBefore = faulty.connections();
    faulty.script(["reset"], "throttle");
    expectUnavailable(await create(nextId++, "Mint"), "unknown");
    expect(faulty.requests().filter((request) => request.operation === "PutItem")).toHaveLength(1 + 3);
    // The reset write went on the kept connection; its retry needed a new one.
    expect(faulty.connections()).toBe(connectionsBefore + 1);
  });
});

describe("a refusal no retry can help", () => {
  test("after two throttled attempts: a 500, whose log line still counts the 3 calls and the fault", async () => {
    faulty.script(["throttle", "throttle", "access-denied"], "proxy");
    const line = await withLogs(async (logs) => {
      expect(expectErrorAnswer(await create(nextId++), 500).message).toMatch(/^internal error/);
      return logs.lastLine();
    });
    expect(line).toMatchObject({ status: 500, StoreAttempts: 3, Fault: 1 });
    expect(line.detail).toMatch(/caused by: DynamoDB answered 400 AccessDeniedException/);
  });
});

describe("ConditionalCheckFailed without the old item", () => {
  async function storeDirectly(id: number, name: string): Promise<void> {
    const { status } = await callDynamoDb(harness.dynamoDb.endpoint, "PutItem", {
      TableName: TEST_TABLE,
      Item: { id: { N: String(id) }, name: { S: name } },
    });
    expect(status).toBe(200);
  }

  test("the same plant already stored: read back, answered as a replay (200)", async () => {
    const id = nextId++;
    await storeDirectly(id, "Fern");
    faulty.script(["condition-failed-without-item"], "proxy");
    const result = await create(id, "Fern");
    expect(result.statusCode).toBe(200);
    expect(faulty.requests().map((request) => request.operation)).toEqual(["PutItem", "GetItem"]);
  });

  test("another plant already stored: read back, answered 409, nothing overwritten", async () => {
    const id = nextId++;
    await storeDirectly(id, "Fern");
    faulty.script(["condition-failed-without-item"], "proxy");
    expectErrorAnswer(await create(id, "Cactus"), 409);
    expect(await storedItem(id)).toEqual({ id: { N: String(id) }, name: { S: "Fern" } });
  });

  test("nothing stored after all (a phantom conflict): retried, and created", async () => {
    const id = nextId++;
    faulty.script(["condition-failed-without-item"], "proxy");
    expect((await create(id, "Ivy")).statusCode).toBe(200);
    expect(await storedItem(id)).toEqual({ id: { N: String(id) }, name: { S: "Ivy" } });
    expectOnlyConditionalPuts();
  });

  test("and the read failing from then on: only the read is retried, 3 attempts, 503, nothing overwritten", async () => {
    const id = nextId++;
    await storeDirectly(id, "Fern");
    faulty.script(["condition-failed-without-item"], "hang");
    // The write was refused by its condition: this request wrote nothing.
    expectUnavailable(await create(id, "Cactus"), "not-written");
    expect(faulty.requests().map((request) => request.operation)).toEqual([
      "PutItem",
      "GetItem",
      "GetItem",
      "GetItem",
    ]);
    expect(await storedItem(id)).toEqual({ id: { N: String(id) }, name: { S: "Fern" } });
  });
});

describe("retries as the AWS SDKs' standard mode", () => {
  /**
   * A store of its own (each test starts with a full retry quota) on a clock that stands still: backoffs
   * pass at once and the deadline never comes, so only the attempts and the quota bound the retries,
   * however loaded the machine.
   */
  const freshStore = (settings: Partial<DynamoDbSettings> = {}) =>
    storeBehindFaults({ clock: cuedClock(faulty, { still: true }), ...settings });
  const putAttempts = () => faulty.requests().filter((request) => request.operation === "PutItem").length;

  // 3 attempts under sustained throttling, each counted: test/lambda/dynamodb-plant-store.test.ts.
  test("STORE_MAX_ATTEMPTS reaches the deployed wiring", async () => {
    faulty.script([], "status-500");
    const config = readConfig({
      ...harness.environment,
      AWS_ENDPOINT_URL_DYNAMODB: faulty.url,
      STORE_MAX_ATTEMPTS: "2",
    });
    const { store } = productionDependencies(config);
    await expect(store.putIfAbsent({ id: BigInt(nextId++), name: "Fern" })).rejects.toMatchObject({
      code: "StoreUnavailable",
    });
    expect(putAttempts()).toBe(2);
  });

  test("backoff is full jitter over 25 ms × 2ⁿ, and the deadline bounds the attempts (on fake time)", async () => {
    faulty.script([], "throttle");
    const clock = new FakeClock();
    const { sleeps } = clock;
    const store = freshStore({ maxAttempts: 100, clock, random: () => 0.999 });
    await expect(store.putIfAbsent({ id: BigInt(nextId++), name: "Fern" })).rejects.toMatchObject({
      status: 503,
    });
    // 0.999 × 25 × 2ⁿ: the seventh wait (1598.4 ms) would end past the 3 s deadline, so there is none.
    expect(sleeps).toEqual([24.975, 49.95, 99.9, 199.8, 399.6, 799.2]);
    expect(putAttempts()).toBe(7);
    expect(clock.now()).toBeLessThan(DEFAULT_STORE_DEADLINE_MS);
  });

  test("200 concurrent requests make at most 3 attempts each; once the quota is spent, later ones make 1", async () => {
    faulty.script([], "throttle");
    const store = freshStore();
    const outcomes = await Promise.allSettled(
      Array.from({ length: 200 }, () => store.putIfAbsent({ id: BigInt(nextId++), name: "Fern" })),
    );
    for (const outcome of outcomes) {
      expect(outcome.status).toBe("rejected");
      if (outcome.status === "rejected") expect(outcome.reason).toMatchObject({ status: 503 });
    }
    // The quota (500, 5 per retry after throttling) pays for 100 retries, not the 400 asked for.
    expect(putAttempts()).toBe(200 + 100);

    faulty.clearRequests();
    for (let request = 0; request < 10; request++) {
      await expect(store.putIfAbsent({ id: BigInt(nextId++), name: "Fern" })).rejects.toMatchObject({
        status: 503,
      });
    }
    expect(putAttempts()).toBe(10);

    // The outage ends: requests succeed at once, and their successes refill the quota.
    faulty.script([], "proxy");
    expect(await store.putIfAbsent({ id: BigInt(nextId++), name: "Fern" })).toEqual({
      created: true,
      calls: 1,
    });
  });
});
