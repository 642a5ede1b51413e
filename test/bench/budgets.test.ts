/**
 * The budget rule (bench/budgets.ts) on made-up measurements: which rows pass, which fail, which cannot be
 * read, and when BENCH_STRICT=1 fails the run. No times are measured here.
 */
import { describe, expect, it } from "vitest";
import { budgetRows, failsStrictRun } from "../../bench/budgets.ts";
import { AWS_LITE_PEER, HANDLER, ISSUER_FREE_FLOOR, SDK_V3_PEER } from "../../bench/bundles.ts";
import type { Measured } from "../../bench/cold-path.ts";
import { answered, condition } from "./made-up-measurements.ts";

const FLOOR_MS = 50;
const SDK_MS = 150;
const AWS_LITE_MS = 70;

function verdicts(handler: Measured, others: Partial<Record<string, Measured>> = {}) {
  const rows = budgetRows(
    condition({
      [ISSUER_FREE_FLOOR]: answered(FLOOR_MS),
      [SDK_V3_PEER]: answered(SDK_MS),
      [AWS_LITE_PEER]: answered(AWS_LITE_MS),
      ...others,
      [HANDLER]: handler,
    }),
  );
  return rows.map((row) => [row.measured, row.verdict]);
}

describe("the budgets", () => {
  it("pass a handler within 1.3× the issuer-free floor, 0.55× the SDK v3 peer and 1× aws-lite", () => {
    expect(verdicts(answered(65))).toEqual([
      ["1.30×", "PASS"],
      ["0.43×", "PASS"],
      ["0.93×", "PASS"],
    ]);
  });

  it("fail each row the handler's first answer is over, and only those", () => {
    expect(verdicts(answered(66)).map(([, verdict]) => verdict)).toEqual(["FAIL", "PASS", "PASS"]);
    expect(verdicts(answered(66), { [SDK_V3_PEER]: answered(118) })).toEqual([
      ["1.32×", "FAIL"],
      ["0.56×", "FAIL"],
      ["0.94×", "PASS"],
    ]);
    expect(verdicts(answered(45), { [AWS_LITE_PEER]: answered(44) })).toEqual([
      ["0.90×", "PASS"],
      ["0.30×", "PASS"],
      ["1.02×", "FAIL"],
    ]);
  });

  it("fail every row when a process of the handler did not answer 200, however fast the others were", () => {
    expect(verdicts(answered(40, 1))).toEqual([
      ["handler 503 in 1 of 21; 0.80× of those that answered", "FAIL"],
      ["handler 503 in 1 of 21; 0.27× of those that answered", "FAIL"],
      ["handler 503 in 1 of 21; 0.57× of those that answered", "FAIL"],
    ]);
  });

  it("cannot be read where the subject compared with failed or was not measured", () => {
    expect(verdicts(answered(40), { [SDK_V3_PEER]: answered(150, 2), [AWS_LITE_PEER]: undefined })).toEqual([
      ["0.80×", "PASS"],
      [`${SDK_V3_PEER} 503 in 2 of 21`, "ERROR"],
      [`${AWS_LITE_PEER} not measured`, "ERROR"],
    ]);
  });

  it("cannot be read at a share where no CPU quota could be made", () => {
    const rows = budgetRows({ ...condition({}, 1024), notMeasured: "no cgroup v1 CPU quota here" });
    expect(rows.map((row) => [row.condition, row.verdict])).toEqual([
      ["1024 MB", "ERROR"],
      ["1024 MB", "ERROR"],
      ["1024 MB", "ERROR"],
    ]);
  });

  it("fail the run under BENCH_STRICT=1 when any row is not PASS, and never without it", () => {
    const passed = { condition: "full core", budget: "", measured: "", verdict: "PASS" } as const;
    const unread = { ...passed, verdict: "ERROR" } as const;
    expect(failsStrictRun([passed, passed], { BENCH_STRICT: "1" })).toBe(false);
    expect(failsStrictRun([passed, { ...passed, verdict: "FAIL" }], { BENCH_STRICT: "1" })).toBe(true);
    expect(failsStrictRun([passed, unread], { BENCH_STRICT: "1" })).toBe(true);
    expect(failsStrictRun([passed, unread], {})).toBe(false);
  });
});
