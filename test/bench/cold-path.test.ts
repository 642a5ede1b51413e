/**
 * A fresh process whose answer is not a 200 (a starved function's 503) or that crashes is a measured
 * outcome of the cold path, not the end of the run: it is counted beside the times of the processes that
 * answered, and the probe makes no call after it. Real fresh processes of a fixture bundle
 * (test/bench/fixtures/answers-in-turn.mjs) behind the modelled network; no times are asserted.
 */
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { measureColdPath } from "../../bench/cold-path.ts";

const FIXTURE = fileURLToPath(new URL("./fixtures/answers-in-turn.mjs", import.meta.url));
const MESSAGE = "the plant store did not confirm the write: the plant may have been stored";

let folder: string;

beforeEach(async () => {
  folder = await mkdtemp(join(tmpdir(), "plant-store-bench-cold-path-"));
});

afterEach(async () => {
  await rm(folder, { recursive: true, force: true });
});

describe("the cold path", () => {
  it("counts the processes that did not answer 200, and keeps the times of those that did", async () => {
    const calls = join(folder, "calls");
    const subject = (name: string, environment: Record<string, string>) => ({
      name,
      bundlePath: FIXTURE,
      environment,
    });
    const [result] = await measureColdPath({
      subjects: [
        subject("once", { ANSWERS: "503", ONCE_FILE: join(folder, "once") }),
        subject("always", { ANSWERS: "503", CALLS_FILE: calls }),
        subject("warm", { ANSWERS: "200,200,503" }),
        subject("crash", { CRASH: "1" }),
      ],
      conditions: [{ subjectNames: ["once", "always", "warm", "crash"], rounds: 3 }],
      roundTrips: { storeMs: 0, issuerMs: 0 },
      warmCalls: 2,
      // Endpoints nothing connects to: the fixture answers without the store or the issuer.
      environment: { AWS_ENDPOINT_URL_DYNAMODB: "http://127.0.0.1:9", JWKS_URL: "http://127.0.0.1:9/jwks" },
      token: "token",
      deliveredKeySet: "{}",
    });
    const of = (name: string) => result?.bySubject.get(name);
    expect(of("once")).toMatchObject({ processes: 3, failed: 1, first: { count: 2 }, warm: { count: 4 } });
    expect(of("once")?.firstFailure).toEqual({ status: 503, message: MESSAGE });
    expect(of("always")).toMatchObject({ processes: 3, failed: 3 });
    expect(of("always")?.first).toBeUndefined();
    // No warm call after a first answer that was not a 200: one call per process.
    expect((await readFile(calls, "utf8")).split("\n").filter(Boolean)).toHaveLength(3);
    expect(of("warm")).toMatchObject({ processes: 3, failed: 3, first: { count: 3 }, warm: { count: 3 } });
    expect(of("crash")).toMatchObject({ processes: 3, failed: 3, firstFailure: { status: 0 } });
  });
});
