/**
 * `npm run test:repeat`: runs a command N times, stops at the first failure and names it, and with --busy
 * keeps a second copy running beside every counted run. The loop is driven here with runs the test
 * finishes itself; the command line through real child processes, on commands quicker than `npm test`.
 */
import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import {
  parseRepeatArguments,
  REPEAT_USAGE,
  type RunResult,
  repeatRuns,
  summaryLine,
} from "../../tools/repeat-runs.ts";
import { REPO } from "../support/local-run.ts";

const PASS: RunResult = { code: 0, output: "ok\n" };
const FAIL: RunResult = { code: 1, output: "1 test failed\n" };

/** Runs whose outcome the test decides, in the order they were started. */
function scriptedRuns(outcomeOf: (label: string) => RunResult) {
  const started: string[] = [];
  let running = 0;
  const concurrentAtStart: number[] = [];
  const start = async (label: string): Promise<RunResult> => {
    started.push(label);
    concurrentAtStart.push(running);
    running++;
    // A macrotask per run, so that the counted and the beside runs interleave as real processes do.
    await new Promise((resolve) => setTimeout(resolve, 1));
    running--;
    return outcomeOf(label);
  };
  return { start, started, concurrentAtStart };
}

describe("repeatRuns", () => {
  it("runs the command N times in a row when every run passes", async () => {
    const runs = scriptedRuns(() => PASS);
    const lines: string[] = [];
    const outcome = await repeatRuns({
      runs: 4,
      busy: false,
      start: runs.start,
      report: (l) => lines.push(l),
    });
    expect(outcome).toEqual({ passed: 4, besidePassed: 0, failure: undefined });
    expect(runs.started).toEqual(["run 1 of 4", "run 2 of 4", "run 3 of 4", "run 4 of 4"]);
    expect(runs.concurrentAtStart).toEqual([0, 0, 0, 0]);
    expect(lines).toHaveLength(4);
    expect(summaryLine(outcome, 4, "npm test")).toBe("test:repeat: 4 of 4 runs of `npm test` passed");
  });

  it("stops at the first failing run and names it", async () => {
    const runs = scriptedRuns((label) => (label === "run 3 of 10" ? FAIL : PASS));
    const lines: string[] = [];
    const outcome = await repeatRuns({
      runs: 10,
      busy: false,
      start: runs.start,
      report: (l) => lines.push(l),
    });
    expect(runs.started).toEqual(["run 1 of 10", "run 2 of 10", "run 3 of 10"]);
    expect(outcome).toEqual({ passed: 2, besidePassed: 0, failure: { label: "run 3 of 10", result: FAIL } });
    expect(lines.at(-1)).toMatch(/^run 3 of 10: FAILED \(exit 1\) after \d+\.\d s$/);
    expect(summaryLine(outcome, 10, "npm test")).toBe(
      "test:repeat: FAILED: run 3 of 10 of `npm test` exited 1, after 2 of 10 passed",
    );
  });

  it("with --busy, keeps a run going beside every counted run, and judges the last one too", async () => {
    const runs = scriptedRuns(() => PASS);
    const outcome = await repeatRuns({ runs: 3, busy: true, start: runs.start, report: () => {} });
    expect(outcome.passed).toBe(3);
    expect(outcome.failure).toBeUndefined();
    const counted = runs.started.flatMap((label, index) => (label.startsWith("run") ? [index] : []));
    for (const index of counted) expect(runs.concurrentAtStart[index]).toBe(1);
    const beside = runs.started.filter((label) => label.startsWith("beside"));
    expect(outcome.besidePassed).toBe(beside.length);
    expect(beside.length).toBeGreaterThanOrEqual(3);
    expect(summaryLine(outcome, 3, "npm test")).toMatch(
      /^test:repeat: 3 of 3 runs of `npm test` passed \(with \d+ more runs passed beside them\)$/,
    );
  });

  it("with --busy, fails when a run beside fails, and starts no counted run after it", async () => {
    const runs = scriptedRuns((label) => (label === "beside 2" ? FAIL : PASS));
    const outcome = await repeatRuns({ runs: 50, busy: true, start: runs.start, report: () => {} });
    expect(outcome.failure).toEqual({ label: "beside 2", result: FAIL });
    expect(outcome.passed).toBeLessThan(50);
    expect(runs.started.filter((label) => label.startsWith("beside"))).toEqual(["beside 1", "beside 2"]);
    const lastCounted = runs.started.findLastIndex((label) => label.startsWith("run"));
    expect(lastCounted).toBeLessThan(runs.started.indexOf("beside 2") + 2);
  });
});

describe("parseRepeatArguments", () => {
  it("takes a count, --busy, and a command after --, `npm test` by default", () => {
    expect(parseRepeatArguments(["10"])).toEqual({ runs: 10, busy: false, command: ["npm", "test"] });
    expect(parseRepeatArguments(["10", "--busy"])).toEqual({
      runs: 10,
      busy: true,
      command: ["npm", "test"],
    });
    expect(parseRepeatArguments(["--busy", "3", "--", "npx", "vitest", "run", "--busy"])).toEqual({
      runs: 3,
      busy: true,
      command: ["npx", "vitest", "run", "--busy"],
    });
  });

  it.each([[[]], [["0"]], [["ten"]], [["3", "4"]], [["3", "--"]], [["--fast", "3"]]])(
    "refuses %j",
    (args) => {
      expect(() => parseRepeatArguments(args)).toThrow(REPEAT_USAGE);
    },
  );
});

describe("npm run test:repeat", () => {
  const dirs: string[] = [];
  afterAll(async () => {
    await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
  });

  const repeat = (args: string[]) =>
    promisify(execFile)("npm", ["run", "--silent", "test:repeat", "--", ...args], { cwd: REPO }).then(
      ({ stdout }) => ({ code: 0, stdout }),
      (error: { code: number; stdout: string }) => ({ code: error.code, stdout: error.stdout }),
    );

  it("stops at the run that fails, prints its output and says which run it was", async () => {
    const dir = await mkdtemp(join(tmpdir(), "plant-store-repeat-"));
    dirs.push(dir);
    const counter = join(dir, "runs");
    // Each run appends a line; the third one fails.
    const script =
      `const fs=require("node:fs");fs.appendFileSync(${JSON.stringify(counter)},"x\\n");` +
      `const n=fs.readFileSync(${JSON.stringify(counter)},"utf8").split("\\n").length-1;` +
      `console.log("this is run "+n);process.exit(n===3?1:0)`;
    const { code, stdout } = await repeat(["5", "--", process.execPath, "-e", script]);
    expect(code).toBe(1);
    expect((await readFile(counter, "utf8")).split("\n")).toHaveLength(4);
    expect(stdout).toContain("run 2 of 5: passed");
    expect(stdout).toMatch(/run 3 of 5: FAILED \(exit 1\)/);
    expect(stdout).toContain("this is run 3");
    const logFile = /\(all of it: (.+failed-run\.log)\)/.exec(stdout)?.[1];
    if (logFile === undefined) throw new Error(`no log file named in:\n${stdout}`);
    dirs.push(dirname(logFile));
    expect(await readFile(logFile, "utf8")).toContain("this is run 3");
    expect(stdout.trimEnd().split("\n").at(-1)).toMatch(
      /^test:repeat: FAILED: run 3 of 5 of `.* -e .*` exited 1, after 2 of 5 passed$/,
    );
  });

  it("passes, with a summary line, when every run passes, --busy ones beside included", async () => {
    const { code, stdout } = await repeat(["3", "--busy", "--", process.execPath, "-e", ""]);
    expect(code).toBe(0);
    expect(stdout.trimEnd().split("\n").at(-1)).toMatch(
      /^test:repeat: 3 of 3 runs of `.* -e ` passed \(with \d+ more runs? passed beside them\)$/,
    );
  });
});
