/**
 * Secrets: a run full of tokens (good, forged, expired, garbage), through every answer the function
 * gives (200, 4xx, 503 from the key set and from the store, 500), never puts a token, a signature,
 * an Authorization value or an AWS credential into the logs or the answers.
 */
import { afterAll, beforeAll, expect, test } from "vitest";
import { readConfig } from "../../lambda/config.ts";
import { productionDependencies } from "../../lambda/dependencies.ts";
import type { ApiGatewayResult } from "../../lambda/http/api-gateway.ts";
import { createHandler, type Handler } from "../../lambda/http/create-handler.ts";
import { generateSigningKey, type MintOptions } from "../../local/token-issuer.ts";
import { apiGatewayEvent, PAYLOAD_VERSIONS } from "../../support/events.ts";
import { type Harness, startHarness } from "../../support/harness.ts";
import { InMemoryPlantStore } from "../../support/in-memory-plant-store.ts";
import { type FaultyDynamoDb, startFaultyDynamoDb } from "../support/faulty-dynamodb.ts";
import {
  accessTokenClaims,
  hmacToken,
  segments,
  signToken,
  unsignedToken,
} from "../support/forged-tokens.ts";
import { captureLogs, withLogs } from "../support/log-capture.ts";

const AWS_SECRET = "AwsSecretCanary0123456789abcdefghijklmnopq";
const AWS_SESSION_TOKEN = "AwsSessionCanaryIQoJb3JpZ2luX2VjEHwaCXVzLWVhc3QtMSJHMEUCIQ";

let harness: Harness;
let faulty: FaultyDynamoDb;

beforeAll(async () => {
  harness = await startHarness({ AWS_SECRET_ACCESS_KEY: AWS_SECRET, AWS_SESSION_TOKEN });
  faulty = await startFaultyDynamoDb(harness.dynamoDb.endpoint);
});

afterAll(async () => {
  await faulty.close();
  await harness.close();
});

function handlerWith(overrides: Record<string, string>): Handler {
  return createHandler(productionDependencies(readConfig({ ...harness.environment, ...overrides })));
}

test("no token, signature, Authorization value or AWS credential appears in any log line or answer", async () => {
  const mint = (options?: MintOptions) => harness.issuer.mint(options);
  const attackerKey = await generateSigningKey();
  const tokens = [
    await mint(),
    await mint({ scope: "plants/read" }),
    await mint({ expiresInSeconds: -600 }),
    await mint({ clientId: "someone-else" }),
    await signToken(attackerKey, accessTokenClaims()),
    await signToken(attackerKey, accessTokenClaims(), { kid: "unknown-key-id" }),
    unsignedToken({}, accessTokenClaims()),
    await hmacToken(new TextEncoder().encode("hmac-secret-canary"), {}, accessTokenClaims()),
  ];
  const good = tokens[0] ?? "";
  const tampered = `${good.slice(0, -6)}AAAAAA`;
  tokens.push(tampered);
  const authorizationValues = [
    ...tokens.map((token) => `Bearer ${token}`),
    `bearer   ${good}  `,
    `Basic ${Buffer.from("admin:BasicPasswordCanary").toString("base64")}`,
    "Bearer RawSecretCanaryValue",
    `Bearer ${good}, Bearer ${tampered}`,
    `Token ${good}`,
    `${good}`,
    "Bearer not.a.jwtCanary",
  ];

  // The store: working (200 and 409), failing (503 after retries), and broken by a bug (500).
  faulty.script([], "status-500");
  const handlers: Handler[] = [
    harness.handler,
    handlerWith({
      AWS_ENDPOINT_URL_DYNAMODB: faulty.url,
      STORE_DEADLINE_MS: "200",
      STORE_ATTEMPT_TIMEOUT_MS: "100",
    }),
    createHandler({
      authenticate: harness.dependencies.authenticate,
      store: new InMemoryPlantStore(async () => {
        throw new TypeError("a bug in the store");
      }),
    }),
  ];

  const logs = captureLogs();
  const results: ApiGatewayResult[] = [];
  let requests = 0;
  try {
    let sequence = 1;
    for (const handler of handlers) {
      for (const authorization of authorizationValues) {
        for (const version of PAYLOAD_VERSIONS) {
          const body = JSON.stringify({ id: 1, name: `Plant ${sequence++}` });
          const event = apiGatewayEvent(version, {
            body,
            withoutHeaders: ["authorization"],
            headers: { Authorization: authorization },
          });
          results.push(await handler(event));
          requests++;
        }
      }
    }
    // And the issuer's key set unreachable while a token names a key not yet cached: 503.
    harness.jwks.setBehaviour("fail");
    const freshHandler = handlerWith({});
    results.push(await freshHandler(apiGatewayEvent("2.0", { token: good })));
    requests++;
  } finally {
    logs.restore();
    harness.jwks.setBehaviour("serve");
  }

  const statuses = new Set(results.map((result) => result.statusCode));
  for (const status of [200, 401, 403, 409, 500, 503])
    expect(statuses, `a ${status} answer`).toContain(status);
  const lines = logs.stdoutLines();
  expect(lines).toHaveLength(requests); // one JSON line per request, and the test really read them
  for (const line of lines) expect(() => JSON.parse(line)).not.toThrow();

  const secrets = new Set<string>([
    AWS_SECRET,
    AWS_SESSION_TOKEN,
    "BasicPasswordCanary",
    "RawSecretCanaryValue",
  ]);
  for (const value of authorizationValues) secrets.add(value.trim());
  for (const token of tokens) {
    secrets.add(token);
    for (const segment of Object.values(segments(token))) if (segment.length >= 16) secrets.add(segment);
  }
  secrets.add(Buffer.from("admin:BasicPasswordCanary").toString("base64"));

  const logText = logs.text();
  const answers = JSON.stringify(results);
  for (const secret of secrets) {
    expect(logText.includes(secret), `the log holds ${secret.slice(0, 24)}…`).toBe(false);
    expect(answers.includes(secret), `an answer holds ${secret.slice(0, 24)}…`).toBe(false);
  }
  // The payload segments would also show up decoded: no claim values (jti) either.
  expect(logText).not.toMatch(/jti|client_id|plants\/read|someone-else/);
});

test("the key set's URL is logged without its credentials or query", async () => {
  const jwksUrl = new URL(harness.jwks.url);
  jwksUrl.username = "svc";
  jwksUrl.password = "UrlPasswordCanary";
  jwksUrl.search = "?api_key=UrlQueryCanary";
  harness.jwks.setBehaviour("fail");
  const logText = await withLogs(async (logs) => {
    // The prefetch at init fails (a WARN line), and so does the request's fetch (503, its detail logged).
    const handler = handlerWith({ JWKS_URL: jwksUrl.href });
    const result = await handler(apiGatewayEvent("2.0", { token: await harness.issuer.mint() }));
    expect(result.statusCode).toBe(503);
    return logs.text();
  }).finally(() => harness.jwks.setBehaviour("serve"));
  expect(logText).toContain(`fetching ${jwksUrl.origin}${jwksUrl.pathname} failed`);
  expect(logText).not.toContain("UrlPasswordCanary");
  expect(logText).not.toContain("UrlQueryCanary");
});
