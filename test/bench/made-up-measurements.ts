/** Made-up measurements for the bench's rule and report tests: figures chosen, none measured. */
import type { ConditionResult, Measured } from "../../bench/cold-path.ts";
import type { Summary } from "../../bench/stats.ts";

export function summary(median: number): Summary {
  return { count: 21, p10: median * 0.9, median, p90: median * 1.1, p99: median * 1.2 };
}

export function answered(firstMs: number, failed = 0): Measured {
  return {
    processes: 21,
    failed,
    first: summary(firstMs),
    importMs: summary(firstMs / 2),
    warm: summary(7),
    warmCpuMs: summary(1),
    ...(failed > 0 ? { firstFailure: { status: 503, message: "the plant store is unavailable" } } : {}),
  };
}

/** A condition of these subjects' measurements: a full core unless a memory size is given. */
export function condition(measured: Partial<Record<string, Measured>>, memoryMb?: number): ConditionResult {
  const bySubject = new Map(
    Object.entries(measured).filter((entry): entry is [string, Measured] => !!entry[1]),
  );
  return {
    ...(memoryMb === undefined ? {} : { memoryMb }),
    subjectNames: [...bySubject.keys()],
    rounds: 21,
    bySubject,
  };
}
