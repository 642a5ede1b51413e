/**
 * The store under multi-Region strong consistency, through the local run: a write refused with
 * ReplicatedWriteConflictException (another Region changing the same plant) is retried within the
 * deadline as a throttle is, and the create answers 200 or a true 503 (nothing written), never a 409 for
 * the caller's own plant; an identical replay answers 200. The conflicts come from npm start's own
 * PLANTS_REPLICATED_WRITE_CONFLICTS, and from a faulty endpoint where the calls must be seen.
 */
import { afterAll, describe, expect, it } from "vitest";
import { DEFAULT_STORE_MAX_ATTEMPTS } from "../../lambda/defaults.ts";
import { mintLocalToken } from "../../local/local-issuer.ts";
import { startLocalRunOnFaultyStore } from "../support/faulty-local-run.ts";
import {
  GENEROUS_STORE_TIMEOUTS,
  type RunningServer,
  startLocalRun,
  startServer,
  tempDataDir,
} from "../support/local-run.ts";

const FERN = '{"id":7,"name":"Fern"}';
const IVY = '{"id":7,"name":"Ivy"}';

/** A create sent to `server` with a token of its data dir's issuer. */
function poster(server: RunningServer, token: string) {
  return async (body: string) => {
    const response = await fetch(`${server.url}/plants`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body,
    });
    return {
      status: response.status,
      retryAfter: response.headers.get("retry-after"),
      body: await response.json(),
    };
  };
}

/** npm start on its embedded store with PLANTS_REPLICATED_WRITE_CONFLICTS=`setting`. */
async function startWithConflicts(setting: string) {
  const dataDir = await tempDataDir();
  const server = await startServer({
    PLANTS_DATA_DIR: dataDir,
    PLANTS_REPLICATED_WRITE_CONFLICTS: setting,
    // An attempt timed out on a busy machine would make the outcome unknown and change the 503's message.
    ...GENEROUS_STORE_TIMEOUTS,
  });
  servers.push(server);
  return { server, post: poster(server, await mintLocalToken(dataDir)) };
}

const servers: RunningServer[] = [];
afterAll(async () => {
  for (const server of servers) await server.stop();
});

describe("npm start with PLANTS_REPLICATED_WRITE_CONFLICTS", () => {
  it("says so in its banner", async () => {
    const { server } = await startWithConflicts("2");
    expect(server.output()).toContain(
      "store faults: the first 2 writes of each plant refused with ReplicatedWriteConflictException",
    );
  });

  it("retries the conflicts within the deadline: 200, then 200 for the same plant again and 409 for another", async () => {
    const { post } = await startWithConflicts(String(DEFAULT_STORE_MAX_ATTEMPTS - 1));
    expect(await post(FERN)).toMatchObject({ status: 200, body: { name: "Fern" } });
    expect(await post(FERN)).toMatchObject({ status: 200, body: { name: "Fern" } });
    expect(await post(IVY)).toMatchObject({ status: 409 });
  });

  it("answers a true 503 when every attempt meets a conflict: nothing was written, so another plant of that id is created", async () => {
    const { post } = await startWithConflicts(String(DEFAULT_STORE_MAX_ATTEMPTS));
    const refused = await post(FERN);
    expect(refused).toEqual({
      status: 503,
      retryAfter: expect.stringMatching(/^[1-9]\d*$/),
      body: { error: 503, message: "the plant store is unavailable; nothing was written, retry later" },
    });
    // The conflicts of id 7 are spent: had the refused create been stored, this would be a 409.
    expect(await post(IVY)).toMatchObject({ status: 200, body: { name: "Ivy" } });
  });

  it("answers 200, never 409, when the other Region's write was this same plant; its replay too", async () => {
    const { post } = await startWithConflicts("1:stored");
    expect(await post(FERN)).toMatchObject({ status: 200, body: { name: "Fern" } });
    expect(await post(FERN)).toMatchObject({ status: 200, body: { name: "Fern" } });
    expect(await post(IVY)).toMatchObject({ status: 409 });
  });

  it("refuses a setting it cannot read, naming it", async () => {
    const command = startLocalRun({
      PLANTS_DATA_DIR: await tempDataDir(),
      PORT: "0",
      PLANTS_REPLICATED_WRITE_CONFLICTS: "two",
    });
    expect(await command.exited).toBe(1);
    expect(command.output().trim()).toBe(
      "npm start failed: PLANTS_REPLICATED_WRITE_CONFLICTS must be a count of conflicts per plant, optionally followed by :stored (like 2 or 1:stored), got 'two'",
    );
  });
});

describe("the local run on a DynamoDB endpoint answering a replicated write conflict", () => {
  it("reads the stored plant strongly consistently after the conflict, and answers the caller's own plant 200", async () => {
    const run = await startLocalRunOnFaultyStore();
    try {
      const post = poster(run.server, await mintLocalToken(run.dataDir));
      run.faulty.clearRequests();
      // The other Region's write of the same plant lands, and this Region's is refused.
      run.faulty.script(["proxy-then-replicated-write-conflict"], "proxy");
      expect(await post(FERN)).toMatchObject({ status: 200, body: { name: "Fern" } });
      const calls = run.faulty
        .requests()
        .map(({ operation, body }) => ({ operation, consistent: body.ConsistentRead }));
      // dynalite sends no stored item with a failed condition (docs/LOCAL.md): the read follows it.
      expect(calls).toEqual([
        { operation: "PutItem", consistent: undefined },
        { operation: "PutItem", consistent: undefined },
        { operation: "GetItem", consistent: true },
      ]);
    } finally {
      await run.close();
    }
  });
});
