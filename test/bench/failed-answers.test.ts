/**
 * A fresh process whose answer is not a 200 (a starved function's 503, item M's 128 MB on a slow hour)
 * is a measured outcome of the bench, not a crash: the probe reports it, and the cold path counts it
 * beside the samples that answered. Against a fixture bundle
 * that answers 503 when told to (test/bench/fixtures/answers-in-turn.mjs); no times are asserted.
 */
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { failedCount, measureColdPath } from "../../bench/cold-path.ts";
import { timeFreshProcess } from "../../bench/first-invocation.ts";
import { apiGatewayEvent } from "../../support/events.ts";

const FIXTURE = fileURLToPath(new URL("./fixtures/answers-in-turn.mjs", import.meta.url));
const EVENT = JSON.stringify(apiGatewayEvent("2.0", { token: "token" }));
const MESSAGE = "the plant store did not confirm the write: the plant may have been stored";

let folder: string;

beforeEach(async () => {
  folder = await mkdtemp(join(tmpdir(), "plant-store-bench-failed-"));
});

afterEach(async () => {
  await rm(folder, { recursive: true, force: true });
});

async function callsMade(file: string): Promise<number> {
  return (await readFile(file, "utf8")).split("\n").filter(Boolean).length;
}

describe("the fresh-process probe", () => {
  it("reports a first answer that is not a 200, with its message, and makes no warm call after it", async () => {
    const calls = join(folder, "calls");
    const outcome = await timeFreshProcess(FIXTURE, { ANSWERS: "503", CALLS_FILE: calls }, EVENT, 1, 3);
    expect(outcome).toEqual({
      importMs: expect.any(Number),
      failed: { status: 503, message: MESSAGE, afterMs: expect.any(Number) },
    });
    expect(await callsMade(calls)).toBe(1);
  });

  it("reports a warm answer that is not a 200, keeping the warm times before it, and stops there", async () => {
    const calls = join(folder, "calls");
    const outcome = await timeFreshProcess(
      FIXTURE,
      { ANSWERS: "200,200,503", CALLS_FILE: calls },
      EVENT,
      1,
      5,
    );
    expect(outcome).toMatchObject({ warmFailed: { status: 503, message: MESSAGE } });
    expect("warmMs" in outcome && outcome.warmMs).toHaveLength(1);
    expect(await callsMade(calls)).toBe(3);
  });
});

describe("the cold path", () => {
  it("keeps, per subject, the samples that answered and counts the processes that did not", async () => {
    const subject = (name: string, environment: Record<string, string>) => ({
      name,
      bundlePath: FIXTURE,
      deliveredKeys: false,
      networkMs: () => 0,
      environment,
    });
    const [condition] = await measureColdPath({
      subjects: [
        subject("once", { ANSWERS: "503", ONCE_FILE: join(folder, "once") }),
        subject("always", { ANSWERS: "503" }),
        subject("warm", { ANSWERS: "200,200,503" }),
      ],
      // Endpoints nothing connects to: the fixture answers without the store or the issuer.
      environment: { AWS_ENDPOINT_URL_DYNAMODB: "http://127.0.0.1:9", JWKS_URL: "http://127.0.0.1:9/jwks" },
      token: "token",
      deliveredKeySet: "{}",
      conditions: [{ roundTrips: { storeMs: 0, issuerMs: 0 }, warmCalls: 2 }],
      rounds: 3,
    });
    if (condition === undefined) throw new Error("no condition measured");
    expect(condition.firstMs.get("once")?.count).toBe(2);
    expect(condition.firstFailed.get("once")).toEqual({
      of: 3,
      answers: [{ status: 503, message: MESSAGE, afterMs: expect.any(Number) }],
    });
    expect(condition.firstMs.has("always")).toBe(false);
    const always = condition.firstFailed.get("always");
    expect(always && failedCount(always)).toBe("503 in 3 of 3");
    expect(condition.warmMs.get("once")?.count).toBe(4);
    expect(condition.firstMs.get("warm")?.count).toBe(3);
    expect(condition.warmMs.get("warm")?.count).toBe(3);
    expect(condition.firstFailed.has("warm")).toBe(false);
    const warm = condition.warmFailed.get("warm");
    expect(warm && failedCount(warm)).toBe("503 in 3 of 3");
  });
});
