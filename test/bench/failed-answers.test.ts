/**
 * A fresh process whose answer is not a 200 (a starved function's 503, item M's 128 MB on a slow hour)
 * is a measured outcome of the bench, not a crash: the probe reports it, the cold path counts it beside
 * the samples that answered, and the memory table and budget rows say so. Against a fixture bundle
 * that answers 503 when told to (test/bench/fixtures/answers-in-turn.mjs); no times are asserted.
 */
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { failedCount, measureColdPath } from "../../bench/cold-path.ts";
import { timeFreshProcess } from "../../bench/first-invocation.ts";
import { cpuBudgetAtShareRows, memoryTable } from "../../bench/items/memory-item.ts";
import { chooseMemorySize, type MemorySizeRow } from "../../bench/memory-sizes.ts";
import type { Summary } from "../../bench/stats.ts";
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

function summary(median: number): Summary {
  return { count: 4, p10: median - 1, median, p90: median + 1, p99: median + 1 };
}

const failures = (count: number, of: number) => ({
  of,
  answers: Array.from({ length: count }, () => ({ status: 503, message: MESSAGE, afterMs: 3000 })),
});

function row(memoryMb: number, firstMs: number, usd: number): MemorySizeRow {
  const reading = { first: summary(firstMs), floorFirst: summary(firstMs), versusFloor: 1 };
  return {
    memoryMb,
    fraction: memoryMb / 1769,
    atShare: reading,
    initAtFullCore: reading,
    warm: summary(5),
    cost: { totalUsd: usd } as MemorySizeRow["cost"],
  };
}

describe("the memory table and rule", () => {
  // 128 MB: one process of five answered 503, the others in 1.7 s. 256 MB: none answered at the share.
  const starved: MemorySizeRow = {
    ...row(128, 1700, 1.8),
    atShare: { first: summary(1700), floorFirst: summary(2000), versusFloor: 0.85, failed: failures(1, 5) },
  };
  const allFailed: MemorySizeRow = {
    ...row(256, 470, 1.81),
    atShare: { floorFirst: summary(470), failed: failures(5, 5) },
  };
  const rows = [starved, allFailed, row(512, 170, 1.885), row(1024, 69, 1.918)];

  it("counts the failed processes in the size's cells, the times and ratio of those that answered beside", () => {
    const lines = memoryTable(rows).split("\n");
    const cells = (memoryMb: number) =>
      (lines.find((line) => line.startsWith(`| ${memoryMb} MB `)) ?? "")
        .split("|")
        .map((cell) => cell.trim());
    expect(cells(128)[3]).toBe("1700.0 (1699.0–1701.0) ms; 503 in 1 of 5");
    expect(cells(128)[4]).toBe("0.85×");
    expect(cells(256)[3]).toBe("503 in 5 of 5");
    expect(cells(256)[4]).toBe("—");
    expect(cells(512)[3]).toBe("170.0 (169.0–171.0) ms");
  });

  it("does not choose a size whose handler failed, however fast and cheap the processes that answered", () => {
    const fastButStarved: MemorySizeRow = {
      ...row(128, 60, 1.8),
      atShare: { first: summary(60), floorFirst: summary(60), versusFloor: 1, failed: failures(1, 5) },
    };
    const choice = chooseMemorySize([fastButStarved, allFailed, row(512, 170, 1.885), row(1024, 69, 1.918)]);
    expect(choice.memoryMb).toBe(1024);
    expect(choice.reason).toContain("left out, the handler answered other than 200: 128, 256 MB");
  });

  it("fails the budget at the default memory's share when a process of the handler failed", () => {
    const condition = {
      roundTrips: { storeMs: 0, issuerMs: 0 },
      firstMs: new Map([
        ["issuer-free floor", summary(70)],
        ["handler (shipped, delivered keys)", summary(66)],
      ]),
      firstCpuMs: new Map(),
      warmMs: new Map(),
      firstFailed: new Map([["handler (shipped, delivered keys)", failures(1, 15)]]),
      warmFailed: new Map(),
    };
    const budget = cpuBudgetAtShareRows(condition, 1024).at(-1);
    expect(budget).toMatchObject({
      verdict: "FAIL",
      measured: "handler 503 in 1 of 15; 0.94× of those that answered",
    });
  });
});
