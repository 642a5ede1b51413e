/**
 * The client end to end against `npm start` as a real child process: its token endpoint, the bundled
 * handler and the embedded store, read back after each create. Faults a real server cannot produce on
 * demand (a revoked token, an expired one) come from wrapping the fetch or the clock, not from mocks.
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type ClientCredentials,
  createPlantStoreClient,
  type PlantStoreClientOptions,
  TokenEndpointError,
} from "../../client/index.ts";
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

describe("createPlant through npm start", () => {
  // The id's forms are each written exactly (create-plant.test.ts); here the extremes are stored exactly.
  it.each([
    ["-9223372036854775808", -9223372036854775808n],
    ["9223372036854775807", "9223372036854775807"],
  ])("stores id %s exactly (given as %o) and answers the plant", async (digits, id) => {
    expect(await clientWith().createPlant({ id, name: "Fern", tag: "fern" })).toEqual({
      name: "Fern",
      tag: "fern",
    });
    const item = await readStoredItem(store.endpoint, store.tableName, digits);
    expect(item).toEqual({ id: { N: digits }, name: { S: "Fern" }, tag: { S: "fern" } });
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
