/** `npm run bench`'s counts and round trips, from BENCH_* variables: docs/PERFORMANCE.md, "How to run it". */
import type { RoundTrips } from "./cold-path.ts";

export interface BenchSettings {
  /** Rounds at a full core and at the budgets' memory share: one fresh process per subject each. */
  rounds: number;
  /** Rounds at each other memory size. */
  memoryRounds: number;
  /** Creates each process answers after its first. */
  warmCalls: number;
  roundTrips: RoundTrips;
}

export function benchSettings(environment: NodeJS.ProcessEnv): BenchSettings {
  const number = (name: string, fallback: number, least: number): number => {
    const value = Number(environment[name] ?? fallback);
    if (!Number.isSafeInteger(value) || value < least)
      throw new Error(`${name} must be an integer ≥ ${least}`);
    return value;
  };
  return {
    rounds: number("BENCH_ROUNDS", 41, 1),
    memoryRounds: number("BENCH_MEMORY_ROUNDS", 11, 1),
    warmCalls: number("BENCH_WARM_CALLS", 30, 0),
    roundTrips: {
      storeMs: number("BENCH_STORE_RTT_MS", 5, 0),
      issuerMs: number("BENCH_ISSUER_RTT_MS", 20, 0),
    },
  };
}
