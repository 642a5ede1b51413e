/**
 * Run counts for the property-based tests: a quick default in `npm test`, and FUZZ_RUNS
 * (`npm run fuzz`) for the long runs. `share` scales a costly property down in fuzz mode.
 */
import { TEST_TIMEOUT_MS } from "./timeouts.ts";

export function fuzzRuns(defaultRuns: number, share = 1): number {
  const requested = Number(process.env.FUZZ_RUNS);
  if (!Number.isSafeInteger(requested) || requested <= 0) return defaultRuns;
  return Math.max(defaultRuns, Math.ceil(requested * share));
}

/** A test timeout that grows with the run count: `msPerRun` generously over what a run costs. */
export function fuzzTimeoutMs(runs: number, msPerRun: number): number {
  return Math.max(TEST_TIMEOUT_MS, runs * msPerRun);
}
