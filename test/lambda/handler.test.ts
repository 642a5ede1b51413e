import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readConfig } from "../../lambda/config.ts";
import { productionDependencies } from "../../lambda/dependencies.ts";
import { ApiError } from "../../lambda/errors.ts";
import { createHandler } from "../../lambda/http/create-handler.ts";
import { describeRoutes } from "../../lambda/http/routes.ts";
import { describeFields } from "../../lambda/plants/create-plant.ts";
import { PLANT_FIELDS } from "../../lambda/plants/plant.ts";
import { apiGatewayEvent, PAYLOAD_VERSIONS } from "../../support/events.ts";
import { type Harness, startHarness, TEST_TABLE } from "../../support/harness.ts";
import { InMemoryPlantStore } from "../../support/in-memory-plant-store.ts";
import { expectErrorAnswer } from "../support/answers.ts";
import { withLogs } from "../support/log-capture.ts";
import { readStoredItem } from "../support/stored-item.ts";

let harness: Harness;
let token: string;
let nextId = 1000;

beforeAll(async () => {
  harness = await startHarness();
  token = await harness.issuer.mint();
});
afterAll(async () => {
  await harness.close();
});

function body(result: { body: string }): Record<string, unknown> {
  return JSON.parse(result.body) as Record<string, unknown>;
}

const storedItem = (id: string) => readStoredItem(harness.dynamoDb.endpoint, TEST_TABLE, id);

describe.each(PAYLOAD_VERSIONS)("POST /plants with payload %s events", (version) => {
  it("creates a plant and answers the spec's Plant, without id", async () => {
    const id = nextId++;
    const result = await harness.handler(
      apiGatewayEvent(version, { token, body: JSON.stringify({ id, name: "Fern", tag: "indoor" }) }),
    );
    expect(result.statusCode).toBe(200);
    expect(result.headers["content-type"]).toBe("application/json");
    expect(body(result)).toEqual({ name: "Fern", tag: "indoor" });
    expect(await storedItem(String(id))).toEqual({
      id: { N: String(id) },
      name: { S: "Fern" },
      tag: { S: "indoor" },
    });
  });

  it("answers an identical replay with 200 and another content with 409, changing nothing", async () => {
    const id = nextId++;
    const create = (name: string) =>
      harness.handler(apiGatewayEvent(version, { token, body: JSON.stringify({ id, name }) }));
    expect((await create("Fern")).statusCode).toBe(200);
    const replay = await create("Fern");
    expect(replay.statusCode).toBe(200);
    expect(body(replay)).toEqual({ name: "Fern" });
    const conflict = await create("Rose");
    expect(conflict.statusCode).toBe(409);
    expect(body(conflict)).toEqual({
      error: 409,
      message: `a plant with id ${id} already exists with another ${describeFields(PLANT_FIELDS)}`,
    });
    expect(await storedItem(String(id))).toEqual({ id: { N: String(id) }, name: { S: "Fern" } });
  });

  it("reads base64-encoded bodies", async () => {
    const id = nextId++;
    const result = await harness.handler(
      apiGatewayEvent(version, { token, base64: true, body: JSON.stringify({ id, name: "Basil" }) }),
    );
    expect(result.statusCode).toBe(200);
    expect(body(result)).toEqual({ name: "Basil" });
  });

  it("reads header names in any case", async () => {
    const event = apiGatewayEvent(version, {
      withoutHeaders: ["content-type"],
      headers: { "CONTENT-TYPE": "application/json; charset=utf-8", AuThOrIzAtIoN: `bearer ${token}` },
      body: JSON.stringify({ id: nextId++, name: "Ivy" }),
    });
    expect((await harness.handler(event)).statusCode).toBe(200);
  });

  it("answers a missing body with 400", async () => {
    const result = await harness.handler(apiGatewayEvent(version, { token, body: undefined }));
    expect(result.statusCode).toBe(400);
    expect(body(result)).toEqual({ error: 400, message: "the body is required: a NewPlant JSON object" });
  });

  it("answers a missing token with 401 and a bare Bearer challenge, before reading the body", async () => {
    const result = await harness.handler(apiGatewayEvent(version, { body: "not json at all" }));
    expect(result.statusCode).toBe(401);
    expect(result.headers["www-authenticate"]).toBe('Bearer realm="plants"');
    expect(body(result)).toEqual({ error: 401, message: "the Authorization header is missing" });
  });
});

it("asks for the deployment's name of the write scope when REQUIRED_SCOPE gives one", async () => {
  const renamed = createHandler(
    productionDependencies(readConfig({ ...harness.environment, REQUIRED_SCOPE: "plants.write" })),
  );
  const event = (scope: string) =>
    harness.issuer
      .mint({ scope })
      .then((scoped) =>
        apiGatewayEvent("2.0", { token: scoped, body: JSON.stringify({ id: nextId++, name: "Fern" }) }),
      );
  await withLogs(async () => {
    const refused = await renamed(await event("plants/write"));
    expect(refused.headers["www-authenticate"]).toContain('scope="plants.write"');
    expect((await renamed(await event("plants.write"))).statusCode).toBe(200);
  });
});

describe("int64 ids", () => {
  const create = (id: string, name = "Fern") =>
    harness.handler(apiGatewayEvent("2.0", { token, body: `{"id":${id},"name":"${name}"}` }));

  it("stores the extremes of the range exactly", async () => {
    for (const id of ["9223372036854775807", "-9223372036854775808", "0"]) {
      expect((await create(id)).statusCode).toBe(200);
      expect(await storedItem(id)).toEqual({ id: { N: id }, name: { S: "Fern" } });
    }
  });

  it("keeps 2^53 and 2^53 + 1 apart", async () => {
    expect((await create("9007199254740992", "Even")).statusCode).toBe(200);
    expect((await create("9007199254740993", "Odd")).statusCode).toBe(200);
    expect(await storedItem("9007199254740992")).toMatchObject({ name: { S: "Even" } });
    expect(await storedItem("9007199254740993")).toMatchObject({ name: { S: "Odd" } });
  });

  it("logs the id exactly", async () => {
    await withLogs(async (logs) => {
      await create("9223372036854775806");
      expect(logs.lastLine().plantId).toBe("9223372036854775806");
    });
  });
});

describe("failures", () => {
  const failingStore = (error: Error) =>
    createHandler({
      authenticate: harness.dependencies.authenticate,
      store: new InMemoryPlantStore(() => Promise.reject(error)),
    });

  it("answers a bug with a generic 500 naming the request id, and logs the details", async () => {
    const handler = failingStore(new TypeError("secret internals: cannot read 'x' of undefined"));
    await withLogs(async (logs) => {
      const result = await handler(apiGatewayEvent("2.0", { token }));
      expect(result.statusCode).toBe(500);
      expect(body(result)).toEqual({ error: 500, message: "internal error; request id CwDvjgQ6joEEMkQ=" });
      expect(result.body).not.toContain("secret internals");
      const line = logs.lastLine();
      expect(line).toMatchObject({
        level: "ERROR",
        status: 500,
        errorKind: "internal_error",
        requestId: "CwDvjgQ6joEEMkQ=",
      });
      expect(String(line.detail)).toContain("secret internals");
    });
  });

  it("answers an unavailable store with 503 and Retry-After", async () => {
    const unavailable = { retryAfterSeconds: 1 };
    const handler = failingStore(
      new ApiError("StoreUnavailable", "the plant store is unavailable", unavailable),
    );
    await withLogs(async () => {
      const result = await handler(apiGatewayEvent("1.0", { token }));
      expect(result.statusCode).toBe(503);
      expect(result.headers["retry-after"]).toBe("1");
      expect(body(result)).toEqual({ error: 503, message: "the plant store is unavailable" });
    });
  });

  it("answers 404 to a method and path of no route in lambda/http/routes.ts, before authenticating", async () => {
    await withLogs(async (logs) => {
      const id = nextId++;
      for (const version of PAYLOAD_VERSIONS) {
        for (const [method, path] of [
          ["DELETE", "/"],
          ["POST", "/plants/"],
          ["PUT", `/plants/${id}`],
        ]) {
          const body = JSON.stringify({ id, name: "Fern" });
          const event = apiGatewayEvent(version, { token, body, method, path });
          const result = await harness.handler(event);
          expect(expectErrorAnswer(result, 404).message).toBe(
            `not found: this API serves ${describeRoutes()}`,
          );
          // Answered before the token was read: no challenge, and nothing written.
          expect(result.headers["www-authenticate"]).toBeUndefined();
        }
        const unauthenticated = apiGatewayEvent(version, { body: JSON.stringify({ id, name: "Fern" }) });
        expect((await harness.handler(unauthenticated)).statusCode).toBe(401);
      }
      expect(await storedItem(String(id))).toBeUndefined();
      const lines = logs.stdoutLines().map((line) => JSON.parse(line) as Record<string, unknown>);
      expect(lines.filter((line) => line.status === 404)).toHaveLength(6);
      expect(lines.find((line) => line.status === 404)).toMatchObject({ errorKind: "not_found" });
    });
  });

  it("writes one JSON log line per request with status, latency, request id and error kind", async () => {
    await withLogs(async (logs) => {
      await harness.handler(apiGatewayEvent("2.0", { token, body: '{"id":1,"name":5}' }));
      expect(logs.stdoutLines()).toHaveLength(1);
      expect(logs.lastLine()).toMatchObject({
        level: "INFO",
        requestId: "CwDvjgQ6joEEMkQ=",
        status: 400,
        errorKind: "bad_request",
        clientId: "plant-store-local",
      });
      expect(typeof logs.lastLine().latencyMs).toBe("number");
    });
  });

  it("logs the time a request waited on the store, within its latency, and none on the issuer once its keys are held", async () => {
    await withLogs(async (logs) => {
      const event = apiGatewayEvent("2.0", { token, body: JSON.stringify({ id: nextId++, name: "Fern" }) });
      expect((await harness.handler(event)).statusCode).toBe(200);
      const line = logs.lastLine() as Record<string, number>;
      expect(line.storeMs).toBeGreaterThan(0);
      expect(line.storeMs).toBeLessThanOrEqual(line.latencyMs ?? 0);
      expect(line.issuerMs).toBe(0);
    });
  });

  it("logs the X-Ray trace id Lambda sets for each invocation, read as it starts", async () => {
    const root = "1-5759e988-bd862e3fe1be46a994272793";
    await withLogs(async (logs) => {
      process.env._X_AMZN_TRACE_ID = `Root=${root};Parent=53995c3f42cd8ad8;Sampled=1`;
      const answered = harness.handler(apiGatewayEvent("2.0", { token, body: '{"id":1,"name":5}' }));
      process.env._X_AMZN_TRACE_ID = "Root=1-5759e988-000000000000000000000000;Sampled=0";
      expect((await answered).statusCode).toBe(400);
      expect(logs.lastLine()).toMatchObject({ traceId: root });
    }).finally(() => delete process.env._X_AMZN_TRACE_ID);
  });

  it("leaves out of a created plant's log line what the request did not have: no error kind, detail or trace id", async () => {
    await withLogs(async (logs) => {
      const id = nextId++;
      const event = apiGatewayEvent("2.0", { token, body: JSON.stringify({ id, name: "Fern" }) });
      expect((await harness.handler(event)).statusCode).toBe(200);
      const line = logs.lastLine();
      expect(line).toMatchObject({
        level: "INFO",
        status: 200,
        plantId: String(id),
        clientId: "plant-store-local",
      });
      for (const absent of ["errorKind", "detail", "traceId"])
        expect(Object.keys(line)).not.toContain(absent);
    });
  });
});
