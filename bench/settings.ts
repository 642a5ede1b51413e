/** `npm run bench`'s settings, from BENCH_* variables; the defaults keep it to a few minutes. */
import { CONTEXT_DEFAULTS } from "../infra/config.ts";
import type { RoundTrips } from "./cold-path.ts";

export interface BenchSettings {
  importRounds: number;
  coldPathRounds: number;
  memoryRounds: number;
  memoryWarmCalls: number;
  roundTrips: RoundTrips;
  firstInvocationRuns: number;
  warmCallsPerRun: number;
  cpuCreates: number;
  loadConnections: number;
  loadSeconds: number;
  loadWarmUpSeconds: number;
  parserRounds: number;
  /** The stack's default memory size (infra/config.ts): the cost's and the CPU share budget's. */
  memoryMb: number;
}

export function benchSettings(environment: NodeJS.ProcessEnv): BenchSettings {
  const count = (name: string, fallback: number): number => {
    const value = Number(environment[name] ?? fallback);
    if (!Number.isSafeInteger(value) || value <= 0) throw new Error(`${name} must be a positive integer`);
    return value;
  };
  const milliseconds = (name: string, fallback: number): number => {
    const value = Number(environment[name] ?? fallback);
    if (!Number.isFinite(value) || value < 0) throw new Error(`${name} must be a number of ms, 0 or more`);
    return value;
  };
  return {
    importRounds: count("BENCH_IMPORT_ROUNDS", 40),
    coldPathRounds: count("BENCH_COLD_ROUNDS", 15),
    memoryRounds: count("BENCH_MEMORY_ROUNDS", 5),
    memoryWarmCalls: count("BENCH_MEMORY_WARM_CALLS", 10),
    roundTrips: {
      storeMs: milliseconds("BENCH_STORE_RTT_MS", 5),
      issuerMs: milliseconds("BENCH_ISSUER_RTT_MS", 20),
    },
    firstInvocationRuns: count("BENCH_FIRST_RUNS", 15),
    warmCallsPerRun: count("BENCH_WARM_CALLS", 40),
    cpuCreates: count("BENCH_CPU_CREATES", 5000),
    loadConnections: count("BENCH_LOAD_CONNECTIONS", 10),
    loadSeconds: count("BENCH_LOAD_SECONDS", 5),
    loadWarmUpSeconds: count("BENCH_LOAD_WARM_UP_SECONDS", 1),
    parserRounds: count("BENCH_PARSER_ROUNDS", 40),
    memoryMb: CONTEXT_DEFAULTS.memorySize,
  };
}

/**
 * BENCH_COLD_EXTRA_BUNDLES=name=path[=flag…],…: more bundles (another commit's, say) measured beside the
 * shipped one, cold (item 2) and warm (item 3). Flags: `prewarmed`, the bundle opens its store
 * connection at init; `delivered-keys`, it takes the issuer's key set from JWKS_JSON (the cold path
 * gives it to this bundle then).
 */
export function extraBundles(
  environment: NodeJS.ProcessEnv,
): { name: string; path: string; storePrewarmed: boolean; deliveredKeys: boolean }[] {
  return (environment.BENCH_COLD_EXTRA_BUNDLES ?? "")
    .split(",")
    .filter((entry) => entry.includes("="))
    .map((entry) => {
      const [name = "", path = "", ...flags] = entry.split("=");
      return {
        name: `extra bundle ${name}`,
        path,
        storePrewarmed: flags.includes("prewarmed"),
        deliveredKeys: flags.includes("delivered-keys"),
      };
    });
}
