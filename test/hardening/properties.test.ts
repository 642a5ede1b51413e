/**
 * Property-based tests of the production handler (real token verification, fake events of both
 * payload versions): no body, header set or Authorization value makes it throw or answer 5xx, every
 * refusal is an Error body, and every 200 is exactly the plant the store holds.
 */
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import type { ApiGatewayEvent, ApiGatewayResult } from "../../lambda/http/api-gateway.ts";
import { createHandler, type Handler } from "../../lambda/http/create-handler.ts";
import { callDynamoDb } from "../../local/dynamodb.ts";
import { apiGatewayEvent, PAYLOAD_VERSIONS, type PayloadVersion } from "../../support/events.ts";
import { type Harness, startHarness, TEST_TABLE } from "../../support/harness.ts";
import { InMemoryPlantStore } from "../../support/in-memory-plant-store.ts";
import { expectBearerChallenge, expectErrorAnswer } from "../support/answers.ts";
import { fuzzRuns, fuzzTimeoutMs } from "../support/fuzz.ts";
import { type HostileBody, hostileBody, plantBody, validText } from "../support/plant-arbitraries.ts";

const BODY_RUNS = fuzzRuns(1200);
const HOSTILE_RUNS = fuzzRuns(1200);
const HEADER_RUNS = fuzzRuns(800);
const EVENT_RUNS = fuzzRuns(400);
// Each of these runs is a few round trips to dynalite: a smaller share of a fuzz run.
const STORED_RUNS = fuzzRuns(150, 0.05);

const version = fc.constantFrom<PayloadVersion>(...PAYLOAD_VERSIONS);

let harness: Harness;
let token: string;

beforeAll(async () => {
  harness = await startHarness();
  token = await harness.issuer.mint();
});

afterAll(async () => {
  await harness.close();
});

/** The production authenticator in front of a fresh in-memory store. */
function handlerWithMemoryStore(): { handler: Handler; store: InMemoryPlantStore } {
  const store = new InMemoryPlantStore();
  return { handler: createHandler({ authenticate: harness.dependencies.authenticate, store }), store };
}

/** What every answer must be: not a 5xx, JSON, a Plant on 200 and an Error body otherwise. */
function expectWellFormedAnswer(result: ApiGatewayResult): void {
  expect(result.statusCode).toBeLessThan(500);
  expect(result.headers["content-type"]).toBe("application/json");
  expect(result.isBase64Encoded).toBe(false);
  if (result.statusCode === 200) {
    const plant = JSON.parse(result.body) as Record<string, unknown>;
    expect(Object.keys(plant).every((key) => key === "name" || key === "tag")).toBe(true);
    expect(typeof plant.name).toBe("string");
  } else {
    expectErrorAnswer(result);
  }
  if (result.statusCode === 401 || result.statusCode === 403) expectBearerChallenge(result);
}

function eventWithBody(payloadVersion: PayloadVersion, body: HostileBody): ApiGatewayEvent {
  if ("text" in body) return apiGatewayEvent(payloadVersion, { token, body: body.text });
  if ("sentAsJson" in body) {
    // What API Gateway makes of a JSON body: text, U+FFFD for what is not UTF-8, the client's length.
    return apiGatewayEvent(payloadVersion, {
      token,
      body: new TextDecoder().decode(body.sentAsJson),
      headers: { "Content-Length": String(body.sentAsJson.byteLength) },
    });
  }
  const event = apiGatewayEvent(payloadVersion, { token, body: undefined });
  event.body = "bytes" in body ? Buffer.from(body.bytes).toString("base64") : body.base64;
  event.isBase64Encoded = true;
  return event;
}

/** RFC 4648 §4 with its padding: what a strict decoder accepts (pad bits aside). */
const PADDED_BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** The bytes the client sent, where the body says: undefined for a base64 string of unknown validity. */
function bytesSent(body: HostileBody): number | undefined {
  if ("bytes" in body) return body.bytes.byteLength;
  if ("sentAsJson" in body) return body.sentAsJson.byteLength;
  if ("base64" in body) return undefined;
  // A text body of a test: its UTF-8 size, a U+FFFD in it counting as the 1 byte it at least stood for.
  return Buffer.byteLength(body.text) - 2 * (body.text.match(/\uFFFD/g)?.length ?? 0);
}

describe("bodies", () => {
  test(
    "a NewPlant body, written any way JSON allows, creates exactly the plant it denotes or is refused with a 400",
    async () => {
      await fc.assert(
        fc.asyncProperty(plantBody, version, async ({ body, expected, names }, payloadVersion) => {
          const { handler, store } = handlerWithMemoryStore();
          const result = await handler(apiGatewayEvent(payloadVersion, { token, body }));
          expectWellFormedAnswer(result);
          if (expected === "bad-request") {
            const { message } = expectErrorAnswer(result, 400);
            if (names !== undefined) expect(message).toContain(`unknown property '${names}'`);
            expect(store.plants.size).toBe(0);
            return;
          }
          expect(result.statusCode).toBe(200);
          const { id, ...plant } = expected;
          expect(JSON.parse(result.body)).toEqual(plant);
          expect([...store.plants.entries()]).toEqual([[id, expected]]);
        }),
        { numRuns: BODY_RUNS },
      );
    },
    fuzzTimeoutMs(BODY_RUNS, 2),
  );

  test(
    "hostile bodies (random JSON and bytes, bytes that are not UTF-8, broken base64, huge, deep, duplicate and __proto__ keys, odd numbers) never crash it; 413 exactly when the client sent more than 16384 bytes",
    async () => {
      await fc.assert(
        fc.asyncProperty(hostileBody, version, async (body, payloadVersion) => {
          const { handler, store } = handlerWithMemoryStore();
          const result = await handler(eventWithBody(payloadVersion, body));
          expectWellFormedAnswer(result);
          const size = bytesSent(body);
          if (size !== undefined) expect(result.statusCode === 413).toBe(size > 16_384);
          if ("base64" in body && !PADDED_BASE64.test(body.base64)) {
            expect(expectErrorAnswer(result, 400).message).toBe("the body is not valid base64");
          }
          if (result.statusCode === 200) {
            const [stored, ...others] = [...store.plants.values()];
            expect(others).toEqual([]);
            expect(stored).toBeDefined();
            expect(validText(stored?.name ?? "", 256)).toBe(true);
            if (stored?.tag !== undefined) expect(validText(stored.tag, 64)).toBe(true);
            expect(JSON.parse(result.body)).toEqual({
              name: stored?.name,
              ...(stored?.tag ? { tag: stored.tag } : {}),
            });
          } else {
            expect(store.plants.size).toBe(0);
          }
          expect(Object.hasOwn(Object.prototype, "polluted")).toBe(false);
        }),
        { numRuns: HOSTILE_RUNS },
      );
    },
    fuzzTimeoutMs(HOSTILE_RUNS, 3),
  );
});

const headerName = fc
  .stringMatching(/^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,20}$/)
  .filter((name) => !["authorization", "content-type"].includes(name.toLowerCase()));
const headerValue = fc.oneof(
  fc.string({ unit: "binary-ascii", maxLength: 60 }),
  fc.string({ maxLength: 60 }),
);

type AuthorizationCase = { value: string | undefined; valid: boolean };
const tokenPart = fc.stringMatching(/^[A-Za-z0-9_-]{0,40}$/);

function authorizationCases(validToken: () => string): fc.Arbitrary<AuthorizationCase> {
  const invalid = (value: string | undefined): AuthorizationCase => ({ value, valid: false });
  return fc.oneof(
    fc
      .tuple(
        fc.constantFrom("Bearer", "bearer", "BEARER"),
        fc.constantFrom(" ", "  "),
        fc.constantFrom("", " "),
      )
      .map(([scheme, gap, trailing]) => ({
        value: `${scheme}${gap}${validToken()}${trailing}`,
        valid: true,
      })),
    fc.constantFrom(undefined, "", " ", "Bearer", "Bearer ", "Basic dXNlcjpwYXNz", "Token abc").map(invalid),
    fc.tuple(tokenPart, tokenPart, tokenPart).map(([a, b, c]) => invalid(`Bearer ${a}.${b}.${c}`)),
    fc.string({ unit: "binary-ascii", maxLength: 80 }).map((value) => invalid(`Bearer ${value}`)),
    fc.string({ maxLength: 80 }).map(invalid),
    fc.tuple(fc.nat(), fc.constantFrom("A", "-", "_", "=")).map(([at, char]) => {
      const good = validToken();
      // After the JOSE header (a changed kid names an unknown key: a key-set refetch, or 503 inside
      // its refetch window, see test/hardening/token-attacks.test.ts), and not the last character:
      // its low bits are base64 padding, which a decoder may ignore.
      const headerEnd = good.indexOf(".") + 1;
      const position = headerEnd + (at % (good.length - 1 - headerEnd));
      const tampered =
        good.slice(0, position) + (good[position] === char ? "B" : char) + good.slice(position + 1);
      return invalid(`Bearer ${tampered}`);
    }),
    fc.constant(null).map(() => invalid(`Bearer ${validToken()}, Bearer ${validToken()}`)),
    fc.constant(null).map(() => invalid(`Bearer ${validToken()}.`)),
    fc.constant(null).map(() => invalid(`Basic ${validToken()}`)),
  );
}

type ContentTypeCase = { value: string | undefined; json: boolean };
const contentTypes: fc.Arbitrary<ContentTypeCase> = fc.oneof(
  fc
    .constantFrom(
      "application/json",
      "APPLICATION/JSON",
      "application/json; charset=utf-8",
      "application/json;charset=UTF-8",
      'application/json; charset="utf-8"',
    )
    .map((value) => ({ value, json: true })),
  fc
    .constantFrom(
      undefined,
      "",
      "text/plain",
      "application/xml",
      "application/json; charset=latin1",
      "application/jsonp",
      "multipart/form-data; boundary=x",
      "application/x-www-form-urlencoded",
    )
    .map((value) => ({ value, json: false })),
  fc
    .string({ maxLength: 40 })
    .filter((value) => !value.trim().toLowerCase().startsWith("application/json"))
    .map((value) => ({ value, json: false })),
);

/** Credentials that are not one good Bearer token: 401, or 400 invalid_request when malformed (RFC 6750 §3.1). */
function expectRefusedCredentials(result: ApiGatewayResult): void {
  expect([400, 401]).toContain(result.statusCode);
  expectBearerChallenge(result, result.statusCode === 400 ? "invalid_request" : undefined);
}

describe("headers", () => {
  test(
    "Authorization values under names that differ only in case are all read: never one taken for the request",
    async () => {
      const authorizationValue = fc.oneof(
        fc.constant(null).map(() => `Bearer ${token}`),
        fc.constantFrom("Bearer not-a-token", "Basic dXNlcjpwYXNz", ""),
      );
      const names = fc.uniqueArray(
        fc.constantFrom("Authorization", "authorization", "AUTHORIZATION", "AuThOrIzAtIoN"),
        { minLength: 2, maxLength: 4 },
      );
      await fc.assert(
        fc.asyncProperty(
          names,
          fc.array(authorizationValue, { minLength: 4, maxLength: 4 }),
          version,
          async (keys, values, payloadVersion) => {
            const { handler, store } = handlerWithMemoryStore();
            const event = apiGatewayEvent(payloadVersion, {
              withoutHeaders: ["authorization"],
              body: '{"id":42,"name":"Fern"}',
            }) as ApiGatewayEvent & {
              headers: Record<string, string>;
              multiValueHeaders?: Record<string, string[]>;
            };
            keys.forEach((key, index) => {
              const value = values[index] ?? "";
              event.headers[key] = value;
              if (event.multiValueHeaders !== undefined) event.multiValueHeaders[key] = [value];
            });
            const result = await handler(event);
            expectWellFormedAnswer(result);
            expectRefusedCredentials(result);
            expect(store.plants.size).toBe(0);
          },
        ),
        { numRuns: HEADER_RUNS },
      );
    },
    fuzzTimeoutMs(HEADER_RUNS, 3),
  );

  test(
    "arbitrary header sets and Authorization values: 401 (or 400 invalid_request) with a Bearer challenge unless the token is good, then 415 unless JSON",
    async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.dictionary(headerName, headerValue, { maxKeys: 12 }),
          authorizationCases(() => token),
          contentTypes,
          fc.constantFrom("authorization", "Authorization", "AUTHORIZATION"),
          fc.constantFrom("content-type", "Content-Type", "CONTENT-TYPE"),
          version,
          async (
            extraHeaders,
            authorization,
            contentType,
            authorizationName,
            contentTypeName,
            payloadVersion,
          ) => {
            const { handler } = handlerWithMemoryStore();
            const headers: Record<string, string> = { ...extraHeaders };
            if (authorization.value !== undefined) headers[authorizationName] = authorization.value;
            if (contentType.value !== undefined) headers[contentTypeName] = contentType.value;
            const event = apiGatewayEvent(payloadVersion, {
              headers,
              withoutHeaders: ["authorization", "content-type"],
              body: '{"id":42,"name":"Fern"}',
            });
            const result = await handler(event);
            expectWellFormedAnswer(result);
            if (!authorization.valid) {
              expectRefusedCredentials(result);
            } else if (!contentType.json) {
              expect(result.statusCode).toBe(415);
            } else {
              expect(result.statusCode).toBe(200);
            }
          },
        ),
        { numRuns: HEADER_RUNS },
      );
    },
    fuzzTimeoutMs(HEADER_RUNS, 3),
  );

  test(
    "any JSON value as an event (what the Lambda runtime can hand over) is answered, never thrown",
    async () => {
      const eventShape = fc.record(
        {
          version: fc.oneof(fc.constantFrom("1.0", "2.0"), fc.jsonValue()),
          headers: fc.oneof(
            fc.constant(null),
            fc.dictionary(fc.string(), fc.oneof(fc.string(), fc.jsonValue())),
            fc.jsonValue(),
            fc.constant({ authorization: `Bearer ${token}`, "content-type": "application/json" }),
          ),
          multiValueHeaders: fc.oneof(
            fc.constant(null),
            fc.dictionary(fc.string(), fc.oneof(fc.array(fc.string()), fc.jsonValue())),
            fc.jsonValue(),
          ),
          body: fc.oneof(fc.constant(null), fc.string(), fc.jsonValue()),
          isBase64Encoded: fc.jsonValue(),
          requestContext: fc.oneof(
            fc.constant(null),
            fc.jsonValue(),
            fc.record({ requestId: fc.jsonValue() }),
          ),
        },
        { requiredKeys: [] },
      );
      await fc.assert(
        fc.asyncProperty(fc.oneof(eventShape, fc.jsonValue()), async (event) => {
          const { handler } = handlerWithMemoryStore();
          const result = await handler(event as ApiGatewayEvent);
          expectWellFormedAnswer(result);
        }),
        { numRuns: EVENT_RUNS },
      );
    },
    fuzzTimeoutMs(EVENT_RUNS, 3),
  );
});

describe("against the real store (dynalite)", () => {
  test(
    "every 200 matches exactly what was stored; a second create of an id is a replay or a 409",
    async () => {
      const model = new Map<bigint, { name: string; tag?: string }>();
      await fc.assert(
        fc.asyncProperty(
          plantBody.filter(({ expected }) => expected !== "bad-request"),
          fc.boolean(),
          version,
          async ({ body, expected }, sendTwice, payloadVersion) => {
            if (expected === "bad-request") return;
            const { id, ...plant } = expected;
            const before = model.get(id);
            const sameAsBefore =
              before !== undefined && before.name === plant.name && before.tag === plant.tag;
            for (let attempt = 0; attempt < (sendTwice ? 2 : 1); attempt++) {
              const result = await harness.handler(apiGatewayEvent(payloadVersion, { token, body }));
              expectWellFormedAnswer(result);
              if (before === undefined || sameAsBefore) {
                expect(result.statusCode).toBe(200);
                expect(JSON.parse(result.body)).toEqual(plant);
              } else {
                expectErrorAnswer(result, 409);
              }
            }
            if (before === undefined) model.set(id, plant);
            const stored = await callDynamoDb(harness.dynamoDb.endpoint, "GetItem", {
              TableName: TEST_TABLE,
              Key: { id: { N: id.toString() } },
              ConsistentRead: true,
            });
            const kept = model.get(id);
            expect(stored.body.Item).toEqual({
              id: { N: id.toString() },
              name: { S: kept?.name },
              ...(kept?.tag === undefined ? {} : { tag: { S: kept.tag } }),
            });
          },
        ),
        { numRuns: STORED_RUNS },
      );
      const { body } = await callDynamoDb(harness.dynamoDb.endpoint, "Scan", {
        TableName: TEST_TABLE,
        Select: "COUNT",
      });
      expect(body.Count).toBe(model.size);
    },
    fuzzTimeoutMs(STORED_RUNS, 40),
  );
});
