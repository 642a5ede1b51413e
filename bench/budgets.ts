/**
 * The budgets, on what a user feels: the handler's first answer (median) over another subject's, measured
 * in the same interleaved rounds, at a full core and at the default memory's CPU share.
 */
import { AWS_LITE_PEER, HANDLER, ISSUER_FREE_FLOOR, SDK_V3_PEER } from "./bundles.ts";
import type { ConditionResult, Measured } from "./cold-path.ts";

/** The memory size whose CPU share the budgets are read at besides a full core: the stack's default. */
export const BUDGET_MEMORY_MB = 1024;

export const BUDGETS = [
  { over: ISSUER_FREE_FLOOR, atMost: 1.3 },
  { over: SDK_V3_PEER, atMost: 0.55 },
  { over: AWS_LITE_PEER, atMost: 1 },
] as const;

export interface BudgetRow {
  condition: string;
  budget: string;
  measured: string;
  verdict: "PASS" | "FAIL" | "ERROR";
}

/** "full core" or "1024 MB": where a condition's processes ran. */
export function conditionLabel({ memoryMb }: { memoryMb?: number }): string {
  return memoryMb === undefined ? "full core" : `${memoryMb} MB`;
}

/**
 * Each budget under `condition`. A process of the handler that did not answer 200 fails it (a budget is
 * not met by a process that failed); one of the other subject's, or none measured, leaves it unread: ERROR.
 */
export function budgetRows(condition: ConditionResult): BudgetRow[] {
  return BUDGETS.map(({ over, atMost }) => {
    const row = { condition: conditionLabel(condition), budget: `${HANDLER} / ${over} ≤ ${atMost}×` };
    if (condition.notMeasured !== undefined) {
      return { ...row, measured: `not measured: ${condition.notMeasured}`, verdict: "ERROR" };
    }
    const handler = condition.bySubject.get(HANDLER);
    const other = condition.bySubject.get(over);
    if (!handler?.processes) return { ...row, measured: "handler not measured", verdict: "ERROR" };
    const ratio = (handler.first?.median ?? Number.NaN) / (other?.first?.median ?? Number.NaN);
    if (handler.failed > 0) {
      const ofAnswered = Number.isNaN(ratio) ? "" : `; ${times(ratio)} of those that answered`;
      return { ...row, measured: `handler ${failedCount(handler)}${ofAnswered}`, verdict: "FAIL" };
    }
    if (!other?.first || other.failed > 0) {
      return { ...row, measured: `${over} ${failedCount(other)}`, verdict: "ERROR" };
    }
    return { ...row, measured: times(ratio), verdict: ratio <= atMost ? "PASS" : "FAIL" };
  });
}

/** BENCH_STRICT=1: the run fails when any budget is not met (FAIL) or cannot be read (ERROR). */
export function failsStrictRun(rows: BudgetRow[], environment: NodeJS.ProcessEnv): boolean {
  return environment.BENCH_STRICT === "1" && rows.some((row) => row.verdict !== "PASS");
}

/** "503 in 1 of 21": the first failed answer's status and how many of the processes did not answer 200. */
export function failedCount(measured: Measured | undefined): string {
  if (measured === undefined || measured.processes === 0) return "not measured";
  const status = measured.firstFailure?.status || "crash";
  return `${status} in ${measured.failed} of ${measured.processes}`;
}

export const times = (value: number) => `${value.toFixed(2)}×`;
