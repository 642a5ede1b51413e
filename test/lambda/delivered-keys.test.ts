/**
 * The issuer's key set delivered with the deployment (JWKS_JSON) and refreshed in the background
 * (lambda/auth/issuer-keys.ts): a cold start waits for no issuer, a request never waits for a refresh,
 * and a key the issuer stops publishing stops being trusted at the first refresh that shows it gone.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, afterEach, beforeAll, describe, expect, test, vi } from "vitest";
import { createAuthenticator, type TokenPolicy } from "../../lambda/auth/authenticate.ts";
import {
  createIssuerKeys,
  KEY_SET_REFETCH_INTERVAL_SECONDS,
  KEY_SET_REFRESH_INTERVAL_SECONDS,
} from "../../lambda/auth/issuer-keys.ts";
import { createJwksFetcher, JWKS_RESPONSE_TIMEOUT_MS } from "../../lambda/auth/key-set-download.ts";
import { handlerFor } from "../../lambda/handler.ts";
import { createHandler } from "../../lambda/http/create-handler.ts";
import { ensurePlantsTable, type LocalDynamoDb, startDynalite } from "../../local/dynamodb.ts";
import {
  createTokenIssuer,
  generateSigningKey,
  LOCAL_CLIENT_ID,
  type TokenIssuer,
} from "../../local/token-issuer.ts";
import { apiGatewayEvent } from "../../support/events.ts";
import { functionEnvironment, TEST_ISSUER, TEST_TABLE } from "../../support/harness.ts";
import { InMemoryPlantStore } from "../../support/in-memory-plant-store.ts";
import { type JwksServer, startJwksServer } from "../../support/jwks-server.ts";
import { expectErrorAnswer } from "../support/answers.ts";
import { FakeClock } from "../support/fake-clock.ts";
import { captureLogs } from "../support/log-capture.ts";

let keyA: TokenIssuer;
let keyB: TokenIssuer;
let nextId = 1;

beforeAll(async () => {
  keyA = await createTokenIssuer(TEST_ISSUER, await generateSigningKey());
  keyB = await createTokenIssuer(TEST_ISSUER, await generateSigningKey());
});

/** Long enough for a loaded machine: vi.waitFor returns as soon as its condition holds. */
const WAIT = { timeout: 10_000 };

const create = () => ({ body: `{"id":${nextId++},"name":"Fern"}` });

describe("a cold start with the key set delivered, its issuer refusing every connection", () => {
  let dynamoDb: LocalDynamoDb;
  let refusingIssuer: Server;
  let connections = 0;

  beforeAll(async () => {
    dynamoDb = await startDynalite();
    await ensurePlantsTable(dynamoDb.endpoint, TEST_TABLE);
    refusingIssuer = createServer();
    refusingIssuer.on("connection", (socket) => {
      connections++;
      socket.destroy();
    });
    await new Promise<void>((resolve) => refusingIssuer.listen(0, "127.0.0.1", resolve));
  });
  afterAll(async () => {
    refusingIssuer.close();
    await dynamoDb.close();
  });

  /** The function's environment as the stack gives it, on dynalite, with the issuer's URL and JWKS_JSON. */
  const lambdaEnvironment = (jwksUrl: string, jwksJson: string) =>
    functionEnvironment(dynamoDb.endpoint, jwksUrl, { JWKS_JSON: jwksJson });

  test("answers its first valid request 200; the issuer is asked only after that answer", async () => {
    const logs = captureLogs();
    try {
      const refusing = `http://127.0.0.1:${(refusingIssuer.address() as AddressInfo).port}/.well-known/jwks.json`;
      const handler = handlerFor(lambdaEnvironment(refusing, JSON.stringify(keyA.jwks)));
      const first = await handler(apiGatewayEvent("2.0", { token: await keyA.mint(), ...create() }));
      expect(first.statusCode).toBe(200);
      expect(connections).toBe(0);
      // Then, after the answer, the function confirms the delivered keys with the issuer: it is refused,
      // the keys keep serving, one line says so.
      await vi.waitFor(() => expect(logs.text()).toContain("refreshing the issuer's key set failed"), {
        timeout: 10_000,
      });
      expect(connections).toBeGreaterThan(0);
      const second = await handler(apiGatewayEvent("2.0", { token: await keyA.mint(), ...create() }));
      expect(second.statusCode).toBe(200);
    } finally {
      logs.restore();
    }
  });

  test("a JWKS_JSON that is not a key set is logged, and the issuer's key set serves instead", async () => {
    const issuerKeys = await startJwksServer(keyA.jwks);
    const logs = captureLogs();
    try {
      const handler = handlerFor(lambdaEnvironment(issuerKeys.url, '{"kty":"RSA"}'));
      const answer = await handler(apiGatewayEvent("2.0", { token: await keyA.mint(), ...create() }));
      expect(answer.statusCode).toBe(200);
      expect(logs.text()).toContain("the key set delivered with the deployment is not usable");
      expect(issuerKeys.fetches()).toBe(1);
    } finally {
      logs.restore();
      await issuerKeys.close();
    }
  });
});

describe("refreshing the delivered keys, on a fake clock", () => {
  let jwks: JwksServer;
  let clock: FakeClock;

  afterEach(async () => {
    await jwks.close();
  });

  /** The key-set requests started, and the last one: a test waits for a refresh to be over. */
  let fetchesStarted = 0;
  let lastFetch: Promise<unknown> = Promise.resolve();

  /** The production wiring (lambda/dependencies.ts) on a fake clock: the refresh runs after each answer. */
  function functionDelivered(delivered: object) {
    const policy = localClientPolicy(jwks.url);
    const fetcher = createJwksFetcher(JWKS_RESPONSE_TIMEOUT_MS, clock);
    const counting = {
      fetch(uri: string) {
        fetchesStarted++;
        const fetching = fetcher.fetch(uri);
        lastFetch = fetching.catch(() => {});
        return fetching;
      },
    };
    fetchesStarted = 0;
    const keys = createIssuerKeys(policy, {
      clock,
      fetcher: counting,
      deliveredKeySet: JSON.stringify(delivered),
    });
    const handler = createHandler({
      authenticate: createAuthenticator(policy, { clock, keys }),
      store: new InMemoryPlantStore(),
      afterAnswer: () => keys.refreshInBackground(),
    });
    return async (issuer: TokenIssuer) => {
      const { statusCode } = await handler(
        apiGatewayEvent("2.0", { token: await issuer.mint(), ...create() }),
      );
      // The handler decides on a refresh in the turn after its answer (setImmediate): let it decide at the
      // time of this request, before the test moves the clock.
      await new Promise((resolve) => setImmediate(resolve));
      return statusCode;
    };
  }

  /**
   * Waits for the refresh started after the last answer to be over: its request answered, then every
   * promise reaction after it (the key set taken), which all run before the next macrotask.
   */
  async function refreshOver(fetchesBefore: number): Promise<void> {
    await vi.waitFor(() => expect(fetchesStarted).toBe(fetchesBefore + 1), WAIT);
    await lastFetch;
    await new Promise((resolve) => setImmediate(resolve));
  }

  test("a key the issuer stops publishing stops verifying within the refresh interval", async () => {
    clock = new FakeClock({ now: Date.now() });
    jwks = await startJwksServer({ keys: [...keyA.jwks.keys, ...keyB.jwks.keys] });
    const send = functionDelivered({ keys: [...keyA.jwks.keys, ...keyB.jwks.keys] });
    expect(await send(keyA)).toBe(200);
    await refreshOver(0); // the first answer's refresh confirms the delivered set

    jwks.setKeys(keyB.jwks); // the issuer drops A
    clock.advance(KEY_SET_REFRESH_INTERVAL_SECONDS * 1000 - 1);
    expect(await send(keyA)).toBe(200); // not yet due: nothing is fetched
    expect(jwks.fetches()).toBe(1);
    clock.advance(1);
    // Due: this request is answered with the keys held, and the refresh starts after its answer.
    expect(await send(keyA)).toBe(200);
    await refreshOver(1);
    const fetches = jwks.fetches();
    expect(await send(keyA)).toBe(401);
    expect(await send(keyB)).toBe(200);
    // The dropped kid is unknown now: it was fetched for once, then its window holds further fetches.
    expect(jwks.fetches()).toBe(fetches + 1);
    expect(await send(keyA)).toBe(503);
    clock.advance(KEY_SET_REFETCH_INTERVAL_SECONDS * 1000);
    expect(await send(keyA)).toBe(401);
  });

  test("a refresh the issuer fails holds back the fetch a key not held would make: one fetch per window", async () => {
    clock = new FakeClock({ now: Date.now() });
    jwks = await startJwksServer(keyA.jwks, "fail");
    const logs = captureLogs();
    try {
      const send = functionDelivered(keyA.jwks);
      expect(await send(keyA)).toBe(200);
      await refreshOver(0); // the refresh confirming the delivered set: the issuer answers 500
      // B's kid is not held, and the issuer failed a moment ago: 503 at once, the issuer not asked again.
      expect(await send(keyB)).toBe(503);
      expect(fetchesStarted).toBe(1);
      expect(await send(keyA)).toBe(200); // the keys last confirmed keep serving
      clock.advance(KEY_SET_REFETCH_INTERVAL_SECONDS * 1000);
      // The window has closed: B's kid is fetched for, once, and the issuer still fails.
      expect(await send(keyB)).toBe(503);
      expect(await send(keyB)).toBe(503);
      expect(fetchesStarted).toBe(2);
    } finally {
      logs.restore();
    }
  });

  test("a request is never held waiting for a refresh: an issuer that hangs changes no answer", async () => {
    clock = new FakeClock({ now: Date.now() });
    jwks = await startJwksServer(keyA.jwks, "hang");
    const logs = captureLogs();
    try {
      const send = functionDelivered(keyA.jwks);
      expect(await send(keyA)).toBe(200); // its refresh hangs
      await vi.waitFor(() => expect(jwks.fetches()).toBe(1), WAIT);
      for (let request = 0; request < 3; request++) expect(await send(keyA)).toBe(200);
      expect(fetchesStarted).toBe(1); // single-flight: the hanging refresh is the only one
      clock.next(); // its response timeout: the immediate retry hangs too
      await vi.waitFor(() => expect(jwks.fetches()).toBe(2), WAIT);
      clock.next();
      await lastFetch;
      await new Promise((resolve) => setImmediate(resolve));
      expect(logs.text()).toContain("refreshing the issuer's key set failed");
      expect(await send(keyA)).toBe(200); // the keys last confirmed keep serving
    } finally {
      logs.restore();
    }
  });
});

test("an unknown kid's refused answer is a 401 with a body naming the key", async () => {
  const jwks = await startJwksServer(keyB.jwks);
  try {
    const policy = localClientPolicy(jwks.url);
    const handler = createHandler({
      authenticate: createAuthenticator(policy, { deliveredKeySet: JSON.stringify(keyB.jwks) }),
      store: new InMemoryPlantStore(),
    });
    const refused = await handler(apiGatewayEvent("2.0", { token: await keyA.mint(), ...create() }));
    expect(expectErrorAnswer(refused, 401).message).toBe("the token is invalid: unknown signing key");
    expect(jwks.fetches()).toBe(1);
  } finally {
    await jwks.close();
  }
});

/** The token policy of the local issuer's client, with the key set at `jwksUrl`. */
function localClientPolicy(jwksUrl: string): TokenPolicy {
  return {
    issuer: TEST_ISSUER,
    jwksUrl,
    audiences: [],
    clientIds: [LOCAL_CLIENT_ID],
  };
}
