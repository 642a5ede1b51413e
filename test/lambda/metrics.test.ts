import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { ApiError, storeUnavailable } from "../../lambda/errors.ts";
import { createHandler, type Handler } from "../../lambda/http/create-handler.ts";
import { METRIC_NAMES } from "../../lambda/metrics.ts";
import { apiGatewayEvent } from "../../support/events.ts";
import { type Harness, startHarness } from "../../support/harness.ts";
import { InMemoryPlantStore } from "../../support/in-memory-plant-store.ts";
import { captureLogs, type LogCapture, withLogs } from "../support/log-capture.ts";

let harness: Harness;
let token: string;
let logs: LogCapture | undefined;
let nextId = 5000;

beforeAll(async () => {
  harness = await startHarness();
  token = await harness.issuer.mint();
});
afterAll(async () => {
  await harness.close();
});
afterEach(() => {
  logs?.restore();
  logs = undefined;
});

interface EmfLine {
  _aws: {
    Timestamp: number;
    CloudWatchMetrics: {
      Namespace: string;
      Dimensions: string[][];
      Metrics: { Name: string; Unit: string }[];
    }[];
  };
  [field: string]: unknown;
}

/** A fresh function instance, as Lambda starts one: its first request is a cold start. */
function freshHandler(): Handler {
  return createHandler({ ...harness.dependencies, functionName: "PlantStore-Handler", functionVersion: "7" });
}

/** Sends the events and reads each request's log line as CloudWatch's EMF extraction would. */
async function metricsOf(handler: Handler, ...bodies: (string | { headers: Record<string, string> })[]) {
  logs = captureLogs();
  for (const body of bodies) {
    const options = typeof body === "string" ? { token, body } : { token, ...body };
    await handler(apiGatewayEvent("2.0", options));
  }
  const lines = logs.stdoutLines().map((line) => JSON.parse(line) as EmfLine);
  logs.restore();
  logs = undefined;
  return lines.map(extractedMetrics);
}

/** What CloudWatch publishes from one EMF line: each listed metric's value under the declared dimensions. */
function extractedMetrics(line: EmfLine): Record<string, unknown> {
  const [directive] = line._aws.CloudWatchMetrics;
  // A fault adds a second directive, read by its own test below.
  if (line.Fault === undefined) expect(line._aws.CloudWatchMetrics).toHaveLength(1);
  expect(directive?.Namespace).toBe("PlantStore");
  expect(Number.isInteger(line._aws.Timestamp)).toBe(true);
  expect(Math.abs(line._aws.Timestamp - Date.now())).toBeLessThan(60_000);
  const dimensions = directive?.Dimensions.flat() ?? [];
  const metrics: Record<string, unknown> = {};
  for (const name of dimensions) metrics[`dimension:${name}`] = line[name];
  for (const { Name, Unit } of directive?.Metrics ?? []) {
    expect(Unit).toBe("Count");
    expect(typeof line[Name]).toBe("number");
    metrics[Name] = line[Name];
  }
  return metrics;
}

const plant = (id: number, name = "Fern") => JSON.stringify({ id, name });
type Extra = Partial<Parameters<typeof createHandler>[0]>;
/** The production authenticator before a store whose every put does `put`. */
const storeDoing = (put: ConstructorParameters<typeof InMemoryPlantStore>[0], extra: Extra = {}) =>
  createHandler({
    authenticate: harness.dependencies.authenticate,
    store: new InMemoryPlantStore(put),
    ...extra,
  });
/** An issuer that cannot be reached, before the harness's store. */
const issuerUnreachable = (extra: Extra = {}) =>
  createHandler({
    authenticate: () =>
      Promise.reject(
        new ApiError("IssuerUnavailable", "the issuer is unavailable", { retryAfterSeconds: 5 }),
      ),
    store: harness.dependencies.store,
    ...extra,
  });

describe("business metrics in the request's log line (CloudWatch EMF)", () => {
  it("counts a create, a replay and a conflict, and the cold start once per instance", async () => {
    const id = nextId++;
    const handler = freshHandler();
    const [created, replayed, conflict] = await metricsOf(handler, plant(id), plant(id), plant(id, "Rose"));
    expect(created).toEqual({
      "dimension:FunctionName": "PlantStore-Handler",
      ColdStart: 1,
      Created: 1,
      StoreAttempts: 1,
    });
    expect(replayed).toEqual({
      "dimension:FunctionName": "PlantStore-Handler",
      Replayed: 1,
      StoreAttempts: 2,
    });
    expect(conflict).toEqual({
      "dimension:FunctionName": "PlantStore-Handler",
      Conflict: 1,
      StoreAttempts: 2,
    });
  });

  it("counts each refusal under its class", async () => {
    const handler = freshHandler();
    const [auth, body, size, mediaType] = await metricsOf(
      handler,
      { headers: { authorization: "Bearer not-a-token" } },
      '{"id":1}',
      JSON.stringify({ id: 1, name: "x".repeat(20_000) }),
      { headers: { "content-type": "text/plain" } },
    );
    expect(auth).toMatchObject({ RefusedAuth: 1 });
    expect(body).toMatchObject({ RefusedBody: 1 });
    expect(size).toMatchObject({ RefusedSize: 1 });
    expect(mediaType).toMatchObject({ RefusedMediaType: 1 });
    for (const refused of [auth, body, size, mediaType]) expect(refused?.StoreAttempts).toBeUndefined();
  });

  it("counts an unavailable store and the attempts it took", async () => {
    const handler = storeDoing(async () => {
      throw Object.assign(storeUnavailable("not-written", 1), { storeCalls: 3 });
    });
    const [line] = await metricsOf(handler, plant(nextId++));
    expect(line).toMatchObject({ StoreUnavailable: 1, StoreAttempts: 3 });
    expect(line?.IssuerUnavailable).toBeUndefined();
  });

  it("counts a create whose first write went unconfirmed, found by its retry, as Created, not Replayed", async () => {
    const handler = storeDoing(async (newPlant) => ({
      created: false,
      existing: newPlant,
      afterUnconfirmedWrite: true,
      calls: 2,
    }));
    const [line] = await metricsOf(handler, plant(nextId++));
    expect(line).toMatchObject({ Created: 1, StoreAttempts: 2 });
    expect(line?.Replayed).toBeUndefined();
  });

  it("never makes a client id, a plant id or a token a dimension", async () => {
    const id = nextId++;
    const [text = ""] = await withLogs(async (captured) => {
      await freshHandler()(apiGatewayEvent("2.0", { token, body: plant(id) }));
      return captured.stdoutLines();
    });
    const line = JSON.parse(text) as EmfLine;
    const dimensions = line._aws.CloudWatchMetrics.flatMap((directive) => directive.Dimensions.flat());
    expect(dimensions).toEqual(["FunctionName"]);
    expect(line.clientId).toBe("plant-store-local");
    expect(line.plantId).toBe(String(id));
    expect(text).not.toContain(token);
    for (const name of Object.keys(line)) {
      if (METRIC_NAMES.includes(name as never)) expect(typeof line[name]).toBe("number");
    }
  });

  it("counts an unavailable issuer apart from the store", async () => {
    const [line] = await metricsOf(issuerUnreachable(), plant(nextId++));
    expect(line).toMatchObject({ IssuerUnavailable: 1 });
    expect(line?.StoreUnavailable).toBeUndefined();
  });

  it("counts a bug's 500 as Fault, per function and per version, and nothing else as Fault", async () => {
    const handler = storeDoing(() => Promise.reject(new TypeError("a bug")), {
      functionName: "PlantStore-Handler",
      functionVersion: "7",
    });
    const line = await withLogs(async (captured) => {
      await handler(apiGatewayEvent("2.0", { token, body: plant(nextId++) }));
      return captured.lastLine() as EmfLine;
    });
    expect(line._aws.CloudWatchMetrics).toEqual([
      expect.objectContaining({
        Dimensions: [["FunctionName"]],
        Metrics: expect.arrayContaining([{ Name: "Fault", Unit: "Count" }]),
      }),
      {
        Namespace: "PlantStore",
        Dimensions: [["FunctionName", "FunctionVersion"]],
        Metrics: [{ Name: "Fault", Unit: "Count" }],
      },
    ]);
    expect(line).toMatchObject({ FunctionName: "PlantStore-Handler", FunctionVersion: "7", Fault: 1 });

    const [refused, issuerDown] = await metricsOf(
      freshHandler(),
      { headers: { authorization: "Bearer not-a-token" } },
      plant(nextId++),
    );
    const [down] = await metricsOf(issuerUnreachable({ functionVersion: "7" }), plant(nextId++));
    for (const counted of [refused, issuerDown, down]) expect(counted?.Fault).toBeUndefined();
  });
});
