/**
 * The deployable bundle's traces: driven with the trace header Lambda sets per invocation, against
 * dynalite and a loopback key set, it sends X-Ray subsegment documents to a loopback UDP port standing in
 * for the daemon. Whether nothing came is read with a marker: a sampled request sent after, on the same
 * socket, whose documents arrive after anything sent before them.
 */
import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Handler } from "../../lambda/http/create-handler.ts";
import { type HandlerFactory, loadHandlerFactory } from "../../local/bundled-handler.ts";
import { LOCAL_REGION } from "../../local/dynamodb.ts";
import { apiGatewayEvent } from "../../support/events.ts";
import { type Harness, startHarness, TEST_TABLE } from "../../support/harness.ts";
import { BUNDLE_PATH } from "../../tools/build-bundle.ts";
import { type FaultyDynamoDb, startFaultyDynamoDb } from "../support/faulty-dynamodb.ts";
import { captureLogs } from "../support/log-capture.ts";
import { type FakeXRayDaemon, type SegmentDocument, startFakeXRayDaemon } from "../support/xray-daemon.ts";

let harness: Harness;
let faulty: FaultyDynamoDb;
let daemon: FakeXRayDaemon;
let handlerFor: HandlerFactory;
let token: string;
let nextId = 5000;
const QUERY_MARK = "only-in-the-query";

beforeAll(async () => {
  [harness, daemon, handlerFor] = await Promise.all([
    startHarness(),
    startFakeXRayDaemon(),
    loadHandlerFactory(),
  ]);
  faulty = await startFaultyDynamoDb(harness.dynamoDb.endpoint);
  token = await harness.issuer.mint();
});

afterAll(async () => {
  await daemon.close();
  await faulty.close();
  await harness.close();
});

/** A fresh handler instance of the bundle (its own key-set prefetch, store and tracing). */
function tracedHandler(environment: Record<string, string> = {}): Handler {
  return handlerFor({ ...harness.environment, AWS_XRAY_DAEMON_ADDRESS: daemon.address, ...environment });
}

interface Trace {
  root: string;
  parent: string;
  header: string;
}

function newTrace(sampled = true): Trace {
  const epoch = Math.floor(Date.now() / 1000).toString(16);
  const root = `1-${epoch}-${randomBytes(12).toString("hex")}`;
  const parent = randomBytes(8).toString("hex");
  return { root, parent, header: `Root=${root};Parent=${parent};Sampled=${sampled ? 1 : 0}` };
}

/** One create, invoked as Lambda invokes: `_X_AMZN_TRACE_ID` set for the invocation (or unset). */
async function create(handler: Handler, traceHeader: string | undefined, name = "Fern") {
  const body = JSON.stringify({ id: nextId++, name });
  const previous = process.env._X_AMZN_TRACE_ID;
  if (traceHeader === undefined) delete process.env._X_AMZN_TRACE_ID;
  else process.env._X_AMZN_TRACE_ID = traceHeader;
  try {
    return await handler(apiGatewayEvent("2.0", { token, body }));
  } finally {
    if (previous === undefined) delete process.env._X_AMZN_TRACE_ID;
    else process.env._X_AMZN_TRACE_ID = previous;
  }
}

/**
 * Sends a sampled create through `handler` and waits for its one subsegment: everything `handler` sent
 * before it has arrived too.
 */
async function afterMarker(handler: Handler): Promise<void> {
  const marker = newTrace();
  expect((await create(handler, marker.header)).statusCode).toBe(200);
  await daemon.received(marker.root, 1);
}

/** What every subsegment must be: independent, under the invocation's segment, with sane times. */
function expectSubsegmentOf(trace: Trace, document: SegmentDocument, window: { from: number; to: number }) {
  expect(document).toMatchObject({ type: "subsegment", trace_id: trace.root, parent_id: trace.parent });
  expect(document.id).toMatch(/^[0-9a-f]{16}$/);
  const start = document.start_time as number;
  const end = document.end_time as number;
  expect(start).toBeGreaterThanOrEqual(window.from / 1000);
  expect(end).toBeGreaterThanOrEqual(start);
  expect(end).toBeLessThanOrEqual(window.to / 1000);
}

/** A request's DynamoDB subsegments in the order of its calls (their start times may share a millisecond). */
const byRetries = (documents: SegmentDocument[]) =>
  [...documents].sort(
    (a, b) => (a.aws as { retries: number }).retries - (b.aws as { retries: number }).retries,
  );

describe("a sampled invocation", () => {
  it("sends a DynamoDB subsegment per store call and a remote one per key-set fetch, nothing of the token or body", async () => {
    const from = Date.now();
    // A key-set URL with a query, as some issuers have: the trace names where, not what is asked. The
    // key set delivered with the deployment lacks the token's key: the invocation fetches the issuer's.
    const handler = tracedHandler({
      JWKS_URL: `${harness.jwks.url}?tenant=${QUERY_MARK}`,
      JWKS_JSON: JSON.stringify({ keys: [] }),
    });
    const trace = newTrace();
    const plantName = `Fern-${randomBytes(6).toString("hex")}`;
    expect((await create(handler, trace.header, plantName)).statusCode).toBe(200);
    await daemon.received(trace.root, 2);
    await afterMarker(handler);
    const to = Date.now();

    const documents = daemon.documents().filter((document) => document.trace_id === trace.root);
    expect(documents).toHaveLength(2);
    for (const document of documents) expectSubsegmentOf(trace, document, { from, to });
    expect(new Set(documents.map((document) => document.id)).size).toBe(2);

    const store = documents.find((document) => document.namespace === "aws");
    expect(store).toMatchObject({
      name: "DynamoDB",
      aws: { operation: "PutItem", table_name: TEST_TABLE, region: LOCAL_REGION, retries: 0 },
      http: { response: { status: 200 } },
    });
    expect(store?.aws).toHaveProperty("request_id", expect.stringMatching(/^\w{20,}$/));
    for (const flag of ["error", "fault", "throttle", "cause"]) expect(store).not.toHaveProperty(flag);

    const keySet = documents.find((document) => document.namespace === "remote");
    const jwksUrl = new URL(harness.jwks.url);
    expect(keySet).toMatchObject({
      name: jwksUrl.host,
      http: {
        request: { method: "GET", url: `${jwksUrl.origin}${jwksUrl.pathname}` },
        response: { status: 200 },
      },
    });

    const sent = JSON.stringify(documents);
    const [, payload, signature] = token.split(".");
    for (const secret of [
      token,
      payload,
      signature,
      plantName,
      ...harness.issuer.jwks.keys.flatMap(keyParts),
    ]) {
      expect(sent).not.toContain(secret);
    }
  });

  it("shows a throttled then stored create as two attempts: the throttled one flagged, the next a retry", async () => {
    const handler = tracedHandler({ AWS_ENDPOINT_URL_DYNAMODB: faulty.url });
    await afterMarker(handler);
    faulty.script(["throttle"]);
    const trace = newTrace();
    expect((await create(handler, trace.header)).statusCode).toBe(200);
    const [throttled, stored] = byRetries(await daemon.received(trace.root, 2));
    expect(throttled).toMatchObject({
      name: "DynamoDB",
      aws: { operation: "PutItem", retries: 0 },
      http: { response: { status: 400 } },
      error: true,
      throttle: true,
      cause: { exceptions: [{ type: "ThrottlingException", remote: true }] },
    });
    expect(throttled).not.toHaveProperty("fault");
    expect(stored).toMatchObject({
      aws: { operation: "PutItem", retries: 1 },
      http: { response: { status: 200 } },
    });
    expect(stored).not.toHaveProperty("error");
  });

  it("flags a store fault as a fault: a 5xx, or no usable answer", async () => {
    const handler = tracedHandler({ AWS_ENDPOINT_URL_DYNAMODB: faulty.url });
    await afterMarker(handler);
    faulty.script(["status-500", "malformed"]);
    const trace = newTrace();
    expect((await create(handler, trace.header)).statusCode).toBe(200);
    const [serverError, unreadable, stored] = byRetries(await daemon.received(trace.root, 3));
    expect(serverError).toMatchObject({
      http: { response: { status: 500 } },
      fault: true,
      cause: { exceptions: [{ type: "InternalServerError" }] },
    });
    expect(unreadable).toMatchObject({
      aws: { retries: 1 },
      fault: true,
      cause: {
        exceptions: [
          { type: "TransientDynamoDbError", message: "PutItem answered 200 with a body that is not JSON" },
        ],
      },
    });
    expect(unreadable).not.toHaveProperty("http");
    expect(stored).toMatchObject({ aws: { retries: 2 }, http: { response: { status: 200 } } });
  });
});

describe("an invocation X-Ray does not sample", () => {
  it("sends nothing, with Sampled=0 or without a header, not even the init's key-set fetch", async () => {
    const handler = tracedHandler();
    const before = daemon.documents().length;
    const unsampled = newTrace(false);
    expect((await create(handler, unsampled.header)).statusCode).toBe(200);
    expect((await create(handler, undefined)).statusCode).toBe(200);
    const marker = newTrace();
    expect((await create(handler, marker.header)).statusCode).toBe(200);
    await daemon.received(marker.root, 1);
    await afterMarker(handler);
    const arrived = daemon.documents().slice(before);
    expect(arrived.filter((document) => document.trace_id === marker.root)).toHaveLength(1);
    expect(arrived.every((document) => document.namespace === "aws")).toBe(true);
    expect(arrived.filter((document) => document.trace_id === unsampled.root)).toEqual([]);
  });
});

describe("the daemon's socket", () => {
  it("is not opened, nor node:dgram loaded, before a sampled invocation, and never keeps the process alive", async () => {
    const unsampled = newTrace(false);
    const sampled = newTrace();
    // The bundle in a process of its own, as Lambda runs it: an unsampled invocation, then a sampled one.
    // The process must then end without being told to.
    const script = [
      `const { handlerFor } = await import(${JSON.stringify(pathToFileURL(BUNDLE_PATH).href)});`,
      "const handler = handlerFor(process.env);",
      'const dgramLoaded = () => process.moduleLoadList.includes("NativeModule dgram");',
      "process.env._X_AMZN_TRACE_ID = process.env.UNSAMPLED;",
      "const first = await handler(JSON.parse(process.env.FIRST));",
      "const loadedBeforeSampled = dgramLoaded();",
      "process.env._X_AMZN_TRACE_ID = process.env.SAMPLED;",
      "const second = await handler(JSON.parse(process.env.SECOND));",
      "process.stderr.write(JSON.stringify({ statuses: [first.statusCode, second.statusCode], loadedBeforeSampled, loadedAfter: dgramLoaded() }));",
    ].join("\n");
    const event = () =>
      apiGatewayEvent("2.0", { token, body: JSON.stringify({ id: nextId++, name: "Fern" }) });
    const stderr = await new Promise<string>((resolve, reject) => {
      execFile(
        process.execPath,
        ["--input-type=module", "--eval", script],
        {
          // Ends a child that does not end by itself well before the test's timeout, failing the test.
          timeout: 20_000,
          env: {
            ...harness.environment,
            AWS_XRAY_DAEMON_ADDRESS: daemon.address,
            UNSAMPLED: unsampled.header,
            SAMPLED: sampled.header,
            FIRST: JSON.stringify(event()),
            SECOND: JSON.stringify(event()),
          },
        },
        (error, _stdout, errors) => (error ? reject(error) : resolve(errors)),
      );
    });
    expect(JSON.parse(stderr)).toEqual({
      statuses: [200, 200],
      loadedBeforeSampled: false,
      loadedAfter: true,
    });
    const [document] = await daemon.received(sampled.root, 1);
    expect(document).toMatchObject({ name: "DynamoDB", aws: { operation: "PutItem" } });
  });
});

describe("without a daemon", () => {
  it("answers as usual when nothing listens at the address, or the address is not one", async () => {
    for (const address of ["127.0.0.1:9", "not an address"]) {
      const handler = tracedHandler({ AWS_XRAY_DAEMON_ADDRESS: address });
      expect((await create(handler, newTrace().header)).statusCode).toBe(200);
      expect((await create(handler, newTrace().header)).statusCode).toBe(200);
    }
  });
});

describe("the request's log line", () => {
  it("carries the trace id when Lambda gives one, sampled or not, and none otherwise", async () => {
    const handler = tracedHandler();
    const sampled = newTrace();
    const unsampled = newTrace(false);
    const logs = captureLogs();
    try {
      await create(handler, sampled.header);
      await create(handler, unsampled.header);
      await create(handler, undefined);
    } finally {
      logs.restore();
    }
    const lines = logs.stdoutLines().map((line) => JSON.parse(line) as { traceId?: string });
    expect(lines.map((line) => line.traceId)).toEqual([sampled.root, unsampled.root, undefined]);
  });
});

/** The values of a JSON Web Key's members that are key material (n, e, x, y, ...), and its kid. */
function keyParts(jwk: object): string[] {
  return Object.entries(jwk)
    .filter(([name, value]) => typeof value === "string" && !["kty", "alg", "use", "crv"].includes(name))
    .map(([, value]) => value as string);
}
