/**
 * The client end to end against `npm start` as a real child process: its token endpoint, the bundled
 * handler and the embedded store, read back after each create. Faults a real server cannot produce on
 * demand (a revoked token, an expired one) come from wrapping the fetch or the clock, not from mocks.
 */
import { readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type ClientCredentials,
  createPlantStoreClient,
  type PlantStoreClientOptions,
  PlantStoreError,
  TokenEndpointError,
} from "../../client/index.ts";
import { callDynamoDb } from "../../local/dynamodb.ts";
import { mintLocalToken } from "../../local/local-issuer.ts";
import { FakeClock } from "../support/fake-clock.ts";
import { npmRun, type RunningServer, startServer, tempDataDir } from "../support/local-run.ts";
import { readStoredItem } from "../support/stored-item.ts";

let dataDir: string;
let server: RunningServer;
let local: ClientCredentials;
let store: { endpoint: string; tableName: string };

beforeAll(async () => {
  dataDir = await tempDataDir();
  server = await startServer({ PLANTS_DATA_DIR: dataDir });
  local = JSON.parse(await readFile(join(dataDir, "client.json"), "utf8")) as ClientCredentials;
  ({ store } = JSON.parse(await readFile(join(dataDir, "server.json"), "utf8")) as { store: typeof store });
});

afterAll(async () => {
  await server?.stop();
});

/** A fetch that counts requests per path, passing them on (after `rewrite`, when given). */
function countingFetch(rewrite?: (url: string, response: Response) => Promise<Response>) {
  const counts = { token: 0, plants: 0 };
  const fetch = async (url: string, init: RequestInit) => {
    const path = new URL(url).pathname;
    if (path === "/oauth2/token") counts.token++;
    if (path === "/plants") counts.plants++;
    const response = await globalThis.fetch(url, init);
    return rewrite ? rewrite(path, response) : response;
  };
  return { counts, fetch };
}

/** Counts of requests are asserted here, so a slow machine must not turn a slow answer into a retry. */
const PATIENT = { attemptTimeoutMs: 20_000, deadlineMs: 20_000 };

function clientWith(options: Partial<PlantStoreClientOptions> = {}) {
  return createPlantStoreClient({ baseUrl: server.url, credentials: local, retry: PATIENT, ...options });
}

describe("<data dir>/client.json and the start banner", () => {
  it("keeps the app client privately (0600), with the base URL, and prints its id and token URL, never its secret", async () => {
    expect((await stat(join(dataDir, "client.json"))).mode & 0o777).toBe(0o600);
    expect(local).toEqual({
      baseUrl: server.url,
      clientId: "plant-store-local",
      clientSecret: expect.stringMatching(/^[0-9a-f]{64}$/),
      tokenUrl: `${server.url}/oauth2/token`,
    });
    expect(server.output()).toContain(`client: id ${local.clientId}; its secret is in `);
    expect(server.output()).not.toContain(local.clientSecret);
    expect(server.output()).toContain(`token URL ${local.tokenUrl}`);
  });
});

describe("createPlant through npm start", () => {
  it.each([
    ["-9223372036854775808", -9223372036854775808n],
    ["9007199254740993", 9007199254740993n],
    ["9223372036854775807", 9223372036854775807n],
    ["-9223372036854775808", "-9223372036854775808"],
    ["9007199254740993", "9007199254740993"],
    ["9223372036854775807", "9223372036854775807"],
  ])("stores id %s exactly (given as %o) and answers the plant", async (digits, id) => {
    // Each form of an id writes it itself: a rounded write must not pass on the item an earlier case left.
    expect(await readStoredItem(store.endpoint, store.tableName, digits)).toBeUndefined();
    expect(await clientWith().createPlant({ id, name: "Fern", tag: "fern" })).toEqual({
      name: "Fern",
      tag: "fern",
    });
    const item = await readStoredItem(store.endpoint, store.tableName, digits);
    expect(item).toEqual({ id: { N: digits }, name: { S: "Fern" }, tag: { S: "fern" } });
    await callDynamoDb(store.endpoint, "DeleteItem", { TableName: store.tableName, Key: { id: item?.id } });
  });

  it("refuses 2 ** 53 + 2 as a number before sending anything", async () => {
    const { counts, fetch } = countingFetch();
    const refusal = clientWith({ fetch }).createPlant({ id: 2 ** 53 + 2, name: "Fern" });
    await expect(refusal).rejects.toThrow(TypeError);
    await expect(refusal).rejects.toThrow("plant id 9007199254740994 is a number that is not a safe integer");
    expect(counts).toEqual({ token: 0, plants: 0 });
    expect(await readStoredItem(store.endpoint, store.tableName, "9007199254740994")).toBeUndefined();
  });

  it("serves 50 concurrent creates with one token fetch", async () => {
    const { counts, fetch } = countingFetch();
    const client = clientWith({ fetch });
    const plants = await Promise.all(
      Array.from({ length: 50 }, (_, index) =>
        client.createPlant({ id: 1000n + BigInt(index), name: `Fern ${index}` }),
      ),
    );
    expect(plants.map((plant) => plant.name)).toEqual(
      Array.from({ length: 50 }, (_, index) => `Fern ${index}`),
    );
    expect(counts).toEqual({ token: 1, plants: 50 });
  });

  it("replaces an expired token once, then keeps using the new one", async () => {
    const { counts, fetch } = countingFetch();
    let now = Date.now();
    const clock = {
      now: () => now,
      setTimer: (callback: () => void, ms: number) => {
        const timer = setTimeout(callback, ms);
        return () => clearTimeout(timer);
      },
    };
    const client = clientWith({ fetch, clock });
    await client.createPlant({ id: 2001n, name: "Fern" });
    now += 3600_000; // the token's expires_in has passed
    await Promise.all([
      client.createPlant({ id: 2002n, name: "Fern" }),
      client.createPlant({ id: 2003n, name: "Fern" }),
    ]);
    await client.createPlant({ id: 2004n, name: "Fern" });
    expect(counts).toEqual({ token: 2, plants: 4 });
  });

  it("fetches one new token when the API answers 401 invalid_token, and creates the plant", async () => {
    // The first token answer carries a token the API refuses (it expired), as if revoked after it was issued.
    const refused = await mintLocalToken(dataDir, { expiresInSeconds: -60 });
    const { counts, fetch } = countingFetch(async (path, response) =>
      path === "/oauth2/token" && counts.token === 1
        ? Response.json({ ...((await response.json()) as object), access_token: refused })
        : response,
    );
    expect(await clientWith({ fetch }).createPlant({ id: 3001n, name: "Fern" })).toEqual({ name: "Fern" });
    expect(counts).toEqual({ token: 2, plants: 2 });
  });

  it("sends again a create whose answer was lost after it was stored, and gets the plant (a replay answers 200)", async () => {
    const { counts, fetch } = countingFetch(async (path, response) => {
      if (path !== "/plants" || counts.plants > 1) return response;
      await response.body?.cancel();
      throw new TypeError("fetch failed", { cause: { code: "ECONNRESET" } });
    });
    expect(await clientWith({ fetch }).createPlant({ id: 3501n, name: "Fern" })).toEqual({ name: "Fern" });
    expect(counts.plants).toBe(2);
    expect((await readStoredItem(store.endpoint, store.tableName, "3501"))?.name).toEqual({ S: "Fern" });
  });

  it("sends again a create that timed out after it was stored, and gets the plant (a replay answers 200)", async () => {
    const clock = new FakeClock();
    const statuses: number[] = [];
    const { counts, fetch } = countingFetch(async (path, response) => {
      if (path !== "/plants") return response;
      statuses.push(response.status);
      if (counts.plants > 1) return response;
      // The API has answered (the plant is stored), but the answer is late: the attempt's timeout passes,
      // the one timer the client has set.
      await response.body?.cancel();
      expect(clock.pendingTimers()).toEqual([PATIENT.attemptTimeoutMs / 2]);
      clock.next();
      throw new DOMException("the attempt timed out", "AbortError");
    });
    const client = clientWith({
      fetch,
      clock,
      random: () => 0,
      // On the fake clock, time passes only by the timeout: half the deadline, the other half for the resend.
      retry: { ...PATIENT, attemptTimeoutMs: PATIENT.attemptTimeoutMs / 2 },
    });
    expect(await client.createPlant({ id: 3502n, name: "Fern" })).toEqual({ name: "Fern" });
    expect(statuses).toEqual([200, 200]);
    expect(await readStoredItem(store.endpoint, store.tableName, "3502")).toEqual({
      id: { N: "3502" },
      name: { S: "Fern" },
    });
  });

  it("throws a 409 with status 409, without retrying it", async () => {
    const { counts, fetch } = countingFetch();
    const client = clientWith({ fetch });
    await client.createPlant({ id: 4001n, name: "Fern" });
    const conflict = await client.createPlant({ id: 4001n, name: "Ivy" }).catch((error: unknown) => error);
    expect(conflict).toBeInstanceOf(PlantStoreError);
    expect(conflict).toMatchObject({
      kind: "conflict",
      status: 409,
      serverMessage: expect.stringContaining("4001"),
      requestId: expect.any(String),
    });
    expect(counts.plants).toBe(2);
    expect((await readStoredItem(store.endpoint, store.tableName, "4001"))?.name).toEqual({ S: "Fern" });
  });

  it("throws an error naming the token endpoint, without the secret, for a wrong client secret", async () => {
    const wrongSecret = `${local.clientSecret.slice(0, -4)}beef`;
    const { counts, fetch } = countingFetch();
    const client = clientWith({ fetch, credentials: { ...local, clientSecret: wrongSecret } });
    const error = (await client
      .createPlant({ id: 5001n, name: "Fern" })
      .catch((thrown: unknown) => thrown)) as Error;
    expect(error).toBeInstanceOf(TokenEndpointError);
    expect(error.message).toBe(`token endpoint ${local.tokenUrl} answered 401 invalid_client`);
    expect(`${error.message} ${error.stack} ${JSON.stringify(error)}`).not.toContain(wrongSecret);
    expect(counts).toEqual({ token: 1, plants: 0 });
    expect(server.output()).not.toContain(wrongSecret);
  });
});

describe("POST /oauth2/token answers like Cognito", () => {
  const basic = (id: string, secret: string) => `Basic ${Buffer.from(`${id}:${secret}`).toString("base64")}`;
  const FORM = "application/x-www-form-urlencoded";

  function tokenRequest(body: string, headers: Record<string, string> = {}) {
    return fetch(local.tokenUrl, {
      method: "POST",
      headers: { authorization: basic(local.clientId, local.clientSecret), "content-type": FORM, ...headers },
      body,
    });
  }

  it("gives a Bearer token with scope plants/write for an hour, which the API accepts", async () => {
    for (const body of [
      "grant_type=client_credentials",
      "grant_type=client_credentials&scope=plants%2Fwrite",
    ]) {
      const response = await tokenRequest(body);
      expect(response.status).toBe(200);
      expect(response.headers.get("cache-control")).toBe("no-store");
      const answer = (await response.json()) as {
        access_token: string;
        expires_in: number;
        token_type: string;
      };
      expect(answer).toEqual({ access_token: expect.any(String), expires_in: 3600, token_type: "Bearer" });
      const created = await fetch(`${server.url}/plants`, {
        method: "POST",
        headers: { authorization: `Bearer ${answer.access_token}`, "content-type": "application/json" },
        body: '{"id":6001,"name":"Fern"}',
      });
      expect(created.status).toBe(200);
    }
  });

  it.each([
    ["no grant_type", "scope=plants%2Fwrite", {}, 400, "invalid_request"],
    ["another grant", "grant_type=password&username=a&password=b", {}, 400, "unsupported_grant_type"],
    [
      "a scope the client lacks",
      "grant_type=client_credentials&scope=plants%2Fadmin",
      {},
      400,
      "invalid_scope",
    ],
    [
      "a JSON body",
      '{"grant_type":"client_credentials"}',
      { "content-type": "application/json" },
      400,
      "invalid_request",
    ],
    ["no Authorization", "grant_type=client_credentials", { authorization: "" }, 401, "invalid_client"],
    [
      "another client id",
      "grant_type=client_credentials",
      { authorization: basic("someone", "x") },
      401,
      "invalid_client",
    ],
    [
      "a parameter sent twice (RFC 6749 §3.2)",
      "grant_type=client_credentials&scope=plants%2Fwrite&scope=admin",
      {},
      400,
      "invalid_request",
    ],
    [
      "grant_type sent twice",
      "grant_type=client_credentials&grant_type=client_credentials",
      {},
      400,
      "invalid_request",
    ],
    [
      "Basic and client_secret in the body: two methods (RFC 6749 §2.3)",
      "grant_type=client_credentials&client_id=plant-store-local&client_secret=x",
      {},
      400,
      "invalid_request",
    ],
    [
      "client_secret_post with a wrong secret",
      "grant_type=client_credentials&client_id=plant-store-local&client_secret=wrong",
      { authorization: "" },
      401,
      "invalid_client",
    ],
    [
      "a client_id in the body naming another client than Basic",
      "grant_type=client_credentials&client_id=someone",
      {},
      401,
      "invalid_client",
    ],
    [
      "a body over 16 KiB",
      `grant_type=client_credentials&pad=${"x".repeat(16 * 1024)}`,
      {},
      400,
      "invalid_request",
    ],
  ])("refuses %s: %i %s, an OAuth error body, never cached", async (_case, body, headers, status, error) => {
    const response = await tokenRequest(body, headers);
    expect(response.status).toBe(status);
    expect(await response.json()).toEqual({ error });
    expect(response.headers.get("cache-control")).toBe("no-store");
    // RFC 9110 §15.5.2 and RFC 6749 §5.2: a 401 challenges, with the scheme the client authenticates by.
    expect(response.headers.get("www-authenticate")).toBe(
      status === 401 ? 'Basic realm="oauth2/token", charset="UTF-8"' : null,
    );
  });

  it("takes client_secret_post, as Cognito does: the id and secret in the form body", async () => {
    const form = new URLSearchParams({
      grant_type: "client_credentials",
      client_id: local.clientId,
      client_secret: local.clientSecret,
    });
    const response = await tokenRequest(form.toString(), { authorization: "" });
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ token_type: "Bearer", expires_in: 3600 });
  });

  it("still answers API Gateway's 404 to anything but POST /plants and POST /oauth2/token", async () => {
    const response = await fetch(local.tokenUrl);
    expect(response.status).toBe(404);
    expect(await response.json()).toEqual({ message: "Not Found" });
  });
});

describe("npm run example", () => {
  it("creates a plant with an id above 2^53 from <data dir>/client.json, and stores it exactly", async () => {
    const { stdout } = await npmRun("example", [], { PLANTS_DATA_DIR: dataDir });
    expect(stdout).toBe(
      `created plant 9007199254740993 at ${server.url}/plants: {"name":"Fern","tag":"fern"}\n`,
    );
    expect((await readStoredItem(store.endpoint, store.tableName, "9007199254740993"))?.id).toEqual({
      N: "9007199254740993",
    });
  });
});
