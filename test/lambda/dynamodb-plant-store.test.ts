import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ApiError } from "../../lambda/errors.ts";
import { createPlant } from "../../lambda/plants/create-plant.ts";
import {
  createDynamoDbPlantStore,
  type DynamoDbSettings,
  type PlantStore,
} from "../../lambda/store/dynamodb-plant-store.ts";
import {
  callDynamoDb,
  ensurePlantsTable,
  LOCAL_CREDENTIALS,
  LOCAL_REGION,
  type LocalDynamoDb,
  startDynalite,
} from "../../local/dynamodb.ts";
import { FakeClock } from "../support/fake-clock.ts";
import { type FaultyDynamoDb, startFaultyDynamoDb } from "../support/faulty-dynamodb.ts";
import { freePort } from "../support/free-port.ts";

/** A DynamoDB plant store on `endpoint` with the local identity, on a still clock unless overridden. */
function localStore(endpoint: string, overrides: Partial<DynamoDbSettings> = {}) {
  return createDynamoDbPlantStore({
    tableName: "plants",
    region: LOCAL_REGION,
    credentials: { ...LOCAL_CREDENTIALS, sessionToken: undefined },
    deadlineMs: 2000,
    attemptTimeoutMs: 1000,
    // Time as these tests need it: it stands still (backoffs pass at once, the deadline never comes) and
    // no attempt times out, so however loaded the machine, only the store's answers and the attempt
    // budget decide. Timeouts are played on cue in test/hardening/store-faults.test.ts.
    clock: new FakeClock({ still: true }),
    endpoint,
    ...overrides,
  });
}

let dynamoDb: LocalDynamoDb;
let store: PlantStore;

beforeAll(async () => {
  dynamoDb = await startDynalite();
  await ensurePlantsTable(dynamoDb.endpoint, "plants");
  store = localStore(dynamoDb.endpoint);
});
afterAll(async () => {
  await dynamoDb.close();
});

describe("the DynamoDB plant store, against dynalite", () => {
  // The item written (allow-listed, the id an exact Number), a replay and a 409 that overwrites nothing:
  // handler.test.ts, through the handler; who wins a race: races.test.ts. Here, how the winner is counted.
  it("answers identical concurrent creates all alike, one of them created, the rest replays", async () => {
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
    const dynamoDbLike = localStore(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    try {
      const outcome = await dynamoDbLike.putIfAbsent({ id: 9007199254740993n, name: "Rose" });
      expect(outcome).toEqual({
        created: false,
        existing: { id: 9007199254740993n, name: "Fern", tag: "indoor" },
        afterUnconfirmedWrite: false,
        calls: 1,
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

describe("the store's attempt count", () => {
  let faulty: FaultyDynamoDb;
  beforeAll(async () => {
    faulty = await startFaultyDynamoDb(dynamoDb.endpoint);
  });
  afterAll(async () => {
    await faulty.close();
  });

  const storeBehindFaults = () => localStore(faulty.url);

  it("counts each call to DynamoDB: the write, the read after a conflict, and failed attempts", async () => {
    expect((await store.putIfAbsent({ id: 500n, name: "Fern" })).calls).toBe(1);

    // dynalite does not return the stored item with the conflict: the store reads it (PutItem, GetItem).
    expect((await store.putIfAbsent({ id: 500n, name: "Rose" })).calls).toBe(2);

    faulty.script(["throttle", "status-500"], "proxy");
    expect(await storeBehindFaults().putIfAbsent({ id: 501n, name: "Fern" })).toEqual({
      created: true,
      calls: 3,
    });

    faulty.script([], "throttle");
    const failed = await storeBehindFaults()
      .putIfAbsent({ id: 502n, name: "Fern" })
      .catch((error: unknown) => error);
    expect(failed).toMatchObject({ status: 503 });
    expect((failed as ApiError).storeCalls).toBe(3);
    expect(faulty.requests().filter(({ fault }) => fault === "throttle")).toHaveLength(3 + 1);
  });
});

describe("a conflict that comes without the stored plant (dynalite): the same attempt reads it", () => {
  let faulty: FaultyDynamoDb;
  beforeAll(async () => {
    faulty = await startFaultyDynamoDb(dynamoDb.endpoint);
    await store.putIfAbsent({ id: 510n, name: "Fern" });
  });
  afterAll(async () => {
    await faulty.close();
  });

  // A read failing every time after the conflict: test/hardening/store-faults.test.ts.
  it("a read that fails once: the next attempt's read answers", async () => {
    faulty.clearRequests();
    faulty.script(["condition-failed-without-item", "status-500"], "proxy");
    expect(await localStore(faulty.url).putIfAbsent({ id: 510n, name: "Rose" })).toEqual({
      created: false,
      existing: { id: 510n, name: "Fern" },
      afterUnconfirmedWrite: false,
      calls: 3,
    });
    expect(faulty.requests().map(({ operation }) => operation)).toEqual(["PutItem", "GetItem", "GetItem"]);
  });

  it("reads at once after the conflict, in the same attempt: no backoff before it", async () => {
    faulty.clearRequests();
    faulty.script(["condition-failed-without-item"], "proxy");
    const clock = new FakeClock();
    expect(await localStore(faulty.url, { clock }).putIfAbsent({ id: 510n, name: "Fern" })).toEqual({
      created: false,
      existing: { id: 510n, name: "Fern" },
      afterUnconfirmedWrite: false,
      calls: 2,
    });
    expect(faulty.requests().map(({ operation }) => operation)).toEqual(["PutItem", "GetItem"]);
    expect(clock.sleeps).toEqual([]);
  });

  it("a conflict on the last attempt still reads the stored plant within that attempt", async () => {
    faulty.clearRequests();
    faulty.script(["throttle", "throttle", "condition-failed-without-item"], "proxy");
    expect(await localStore(faulty.url).putIfAbsent({ id: 510n, name: "Fern" })).toMatchObject({
      created: false,
      existing: { id: 510n, name: "Fern" },
      calls: 4,
    });
    expect(faulty.requests().map(({ operation }) => operation)).toEqual([
      "PutItem",
      "PutItem",
      "PutItem",
      "GetItem",
    ]);
  });
});

describe("signing", () => {
  const identity = {
    region: "eu-west-1",
    credentials: {
      accessKeyId: "ASIAEXAMPLE",
      secretAccessKey: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
      sessionToken: "session-token-of-the-role",
    },
  };

  it("signs every call (SigV4, with the session token) so that DynamoDB's check accepts it", async () => {
    const faulty = await startFaultyDynamoDb(dynamoDb.endpoint, identity);
    try {
      const signedStore = localStore(faulty.url, identity);
      await signedStore.putIfAbsent({ id: 700n, name: "Fern", tag: "ünïcödé" });
      faulty.script(["throttle", "condition-failed-without-item"], "proxy");
      await signedStore.putIfAbsent({ id: 700n, name: "Fern", tag: "ünïcödé" });
      await callDynamoDb(faulty.url, "GetItem", { TableName: "plants", Key: { id: { N: "700" } } }, identity);

      const requests = faulty.requests();
      expect(requests.map(({ operation }) => operation)).toEqual([
        "PutItem",
        "PutItem",
        "PutItem",
        "GetItem",
        "GetItem",
      ]);
      for (const { signatureRefusal, sessionToken } of requests) {
        expect(signatureRefusal).toBeUndefined();
        expect(sessionToken).toBe(identity.credentials.sessionToken);
      }

      const wrongKey = localStore(faulty.url, {
        region: identity.region,
        credentials: { ...identity.credentials, secretAccessKey: "not-the-key" },
      });
      faulty.clearRequests();
      await wrongKey.putIfAbsent({ id: 701n, name: "Fern" });
      expect(faulty.requests()[0]?.signatureRefusal).toBe("the signature does not match the request");
    } finally {
      await faulty.close();
    }
  });
});

describe("prewarm", () => {
  it("opens the connection that the first write then uses, sending nothing on it", async () => {
    const faulty = await startFaultyDynamoDb(dynamoDb.endpoint);
    try {
      const warmStore = localStore(faulty.url);
      await warmStore.prewarm();
      expect(faulty.connections()).toBe(1);
      expect(faulty.healthChecks()).toBe(0);
      expect(faulty.requests()).toEqual([]);
      expect(await warmStore.putIfAbsent({ id: 600n, name: "Fern" })).toEqual({ created: true, calls: 1 });
      expect(faulty.requests().map(({ operation }) => operation)).toEqual(["PutItem"]);
      expect(faulty.connections()).toBe(1);
    } finally {
      await faulty.close();
    }
  });

  it("is harmless when the endpoint cannot be reached: it resolves, and the store still answers", async () => {
    const port = await freePort(); // nothing listens there
    const coldStore = localStore(`http://127.0.0.1:${port}`, { deadlineMs: 300, attemptTimeoutMs: 100 });
    await expect(coldStore.prewarm()).resolves.toBeUndefined();
    await expect(coldStore.putIfAbsent({ id: 601n, name: "Fern" })).rejects.toMatchObject({
      status: 503,
    });

    // A server that never answers: the warm-up gives up when its signal aborts (an attempt's timeout).
    const silent = createServer(() => undefined);
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
    try {
      const hungStore = localStore(`http://127.0.0.1:${(silent.address() as AddressInfo).port}`);
      const giveUp = new AbortController();
      const warming = hungStore.prewarm(giveUp.signal);
      giveUp.abort(new Error("the attempt's timeout"));
      await expect(warming).resolves.toBeUndefined();
    } finally {
      silent.closeAllConnections();
      silent.close();
    }
  });
});
