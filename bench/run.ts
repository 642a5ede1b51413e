/**
 * `npm run bench`: cold start, the cold path as AWS sees it, first invocation, warm CPU, local load
 * and cost, each against its budget, printed as one table. Every budget is a ratio to a floor measured
 * in the same run. It is a report: it exits 0 even when a budget fails, unless BENCH_STRICT=1. Counts
 * come from BENCH_* variables; the defaults keep it to a few minutes. `--node <path>` (or BENCH_NODE)
 * measures on another Node binary (bench/bench-node.ts).
 */
import { availableParallelism, cpus, loadavg } from "node:os";
import { CONTEXT_DEFAULTS } from "../infra/config.ts";
import { startHarness } from "../support/harness.ts";
import { requestedOtherNode, runOnNode } from "./bench-node.ts";
import { type BenchBundles, buildBenchBundles } from "./bundles.ts";
import {
  type ColdPathSubject,
  measureColdPath,
  NEW_CONNECTION_ROUND_TRIPS,
  type RoundTrips,
} from "./cold-path.ts";
import { measureColdStart } from "./cold-start.ts";
import { costPerMillionCreates, estimatedAwsDurationMs } from "./cost.ts";
import { measureFirstInvocations } from "./first-invocation.ts";
import { measureLocalLoad } from "./local-load.ts";
import { measureParserRows } from "./parser.ts";
import { PRICES_READ_ON, PRICES_REGION } from "./prices.ts";
import { budgetRow, errorRow, infoRow, micros, ms, type Row, renderTable, times, usd } from "./report.ts";
import type { Summary } from "./stats.ts";
import { measureWarmCpu } from "./warm-cpu.ts";

const BUDGET = {
  bundleKiB: 40,
  importRatio: 1.5,
  /** First answer over the verifying floor, at the default round trips and at zero (the CPU part). */
  coldPathRatio: 1.1,
  coldPathCpuRatio: 1.15,
  warmCpuRatio: 1.5,
  localPathRatio: 1.25,
} as const;

/** In-region DynamoDB PutItem round trips, as commonly observed: an assumption, not a measurement. */
const AWS_STORE_ROUND_TRIP_MS = { low: 3, high: 8 } as const;

function count(name: string, fallback: number): number {
  const value = Number(process.env[name] ?? fallback);
  if (!Number.isSafeInteger(value) || value <= 0) throw new Error(`${name} must be a positive integer`);
  return value;
}

function milliseconds(name: string, fallback: number): number {
  const value = Number(process.env[name] ?? fallback);
  if (!Number.isFinite(value) || value < 0) throw new Error(`${name} must be a number of ms, 0 or more`);
  return value;
}

const otherNode = requestedOtherNode(process.argv.slice(2), process.env);
if (otherNode !== undefined) process.exit(await runOnNode(otherNode, "./run.ts", process.argv.slice(2)));

const settings = {
  importRounds: count("BENCH_IMPORT_ROUNDS", 40),
  coldPathRounds: count("BENCH_COLD_ROUNDS", 15),
  roundTrips: {
    storeMs: milliseconds("BENCH_STORE_RTT_MS", 5),
    issuerMs: milliseconds("BENCH_ISSUER_RTT_MS", 20),
  } satisfies RoundTrips,
  firstInvocationRuns: count("BENCH_FIRST_RUNS", 15),
  warmCallsPerRun: count("BENCH_WARM_CALLS", 40),
  cpuCreates: count("BENCH_CPU_CREATES", 5000),
  loadConnections: count("BENCH_LOAD_CONNECTIONS", 10),
  loadSeconds: count("BENCH_LOAD_SECONDS", 5),
  loadWarmUpSeconds: count("BENCH_LOAD_WARM_UP_SECONDS", 1),
  parserRounds: count("BENCH_PARSER_ROUNDS", 40),
};
const memoryMb = CONTEXT_DEFAULTS.memorySize;
const STORE_FLOOR = "store floor (1 TLS connection, 1 PutItem)";
const VERIFYING_FLOOR = "verifying floor (+ key set GET, RS256 verify)";
const HANDLER = "handler (shipped bundle)";
const startedAt = performance.now();
const rows: Row[] = [];
const notes: string[] = [];

/** BENCH_ONLY=2,3: only those items run (the bundle size is always shown). */
const onlyItems = process.env.BENCH_ONLY?.split(",").map((item) => item.trim());

async function section(item: string, name: string, measure: () => Promise<void>): Promise<void> {
  if (onlyItems !== undefined && !onlyItems.includes(item)) return;
  process.stderr.write(`bench: ${name}...\n`);
  try {
    await measure();
  } catch (error) {
    rows.push(errorRow(item, name, error));
    console.error(error);
  }
}

const bundles = await buildBenchBundles();
const bundleKiB = bundles.handlerBytes / 1024;
rows.push(
  budgetRow(
    "1",
    "Bundle size, minified, no source map",
    `${bundleKiB.toFixed(1)} KiB`,
    bundleKiB,
    BUDGET.bundleKiB,
    `≤ ${BUDGET.bundleKiB} KiB`,
  ),
);

await section("1", "Cold start: import of the bundle", async () => {
  const cold = await measureColdStart(bundles.handlerPath, bundles.emptyPath, settings.importRounds);
  rows.push(
    infoRow(
      "1",
      `Import of the bundle, median (p90), ${cold.bundle.count} fresh processes`,
      `${ms(cold.bundle.median)} (${ms(cold.bundle.p90)})`,
    ),
    infoRow(
      "1",
      "Import of an empty handler, same run, interleaved",
      `${ms(cold.empty.median)} (${ms(cold.empty.p90)})`,
    ),
    budgetRow(
      "1",
      "Import ratio, bundle / empty handler (medians)",
      times(cold.ratio),
      cold.ratio,
      BUDGET.importRatio,
      `≤ ${BUDGET.importRatio}×`,
    ),
  );
});

const harness = await startHarness();
const token = await harness.issuer.mint();
let warmDurationMs: number | undefined;
let createCpuMicros: number | undefined;
try {
  await section("2", "Cold path over TLS with round-trip times", async () => {
    const { roundTrips } = settings;
    const zero: RoundTrips = { storeMs: 0, issuerMs: 0 };
    const conditions = await measureColdPath({
      subjects: coldPathSubjects(bundles),
      environment: harness.environment,
      token,
      conditions: [roundTrips, zero],
      rounds: settings.coldPathRounds,
    });
    for (const [index, condition] of conditions.entries()) {
      const label = rttLabel(condition.roundTrips);
      const floor = condition.firstMs.get(VERIFYING_FLOOR);
      if (floor === undefined) throw new Error("the verifying floor was not measured");
      for (const [name, summary] of condition.firstMs) {
        const versusFloor = name === VERIFYING_FLOOR ? "" : `, ${times(summary.median / floor.median)}`;
        const cpu = condition.firstCpuMs.get(name)?.median ?? Number.NaN;
        rows.push(
          infoRow(
            "2",
            `${label}: ${name}, import to first answer, median (p10–p90) of ${summary.count}; CPU`,
            `${ms(summary.median)} (${ms(summary.p10)}–${ms(summary.p90)})${versusFloor}; CPU ${ms(cpu)}`,
          ),
        );
      }
      const handler = condition.firstMs.get(HANDLER);
      if (handler === undefined) throw new Error("the handler was not measured");
      const limit = index === 0 ? BUDGET.coldPathRatio : BUDGET.coldPathCpuRatio;
      const ratio = handler.median / floor.median;
      const cpuRatio =
        (condition.firstCpuMs.get(HANDLER)?.median ?? Number.NaN) /
        (condition.firstCpuMs.get(VERIFYING_FLOOR)?.median ?? Number.NaN);
      rows.push(
        infoRow("2", `${label}: CPU ratio, handler / verifying floor (medians)`, times(cpuRatio)),
        budgetRow(
          "2",
          `${label}: cold path ratio, handler / verifying floor (medians)`,
          times(ratio),
          ratio,
          limit,
          `≤ ${limit}×`,
        ),
      );
    }
    const [atDefaults, atZero] = conditions;
    if (atDefaults !== undefined && atZero !== undefined) {
      const moves = coldPathSubjects(bundles).map((subject) => {
        const at = (condition: typeof atZero, pick: (summary: Summary) => number) => {
          const summary = condition.firstMs.get(subject.name);
          return summary === undefined ? Number.NaN : pick(summary);
        };
        const median = at(atDefaults, (s) => s.median) - at(atZero, (s) => s.median);
        const p10 = at(atDefaults, (s) => s.p10) - at(atZero, (s) => s.p10);
        return `${subject.name} ${signed(median)} ms, p10 ${signed(p10)} ms (model +${subject.networkMs(roundTrips)} ms)`;
      });
      notes.push(
        `cold path, how far each moved from zero RTTs to ${rttLabel(roundTrips)}, median and p10: ${moves.join("; ")}`,
      );
    }
  });

  await section("2", "First invocation on loopback", async () => {
    const extras = extraBundles();
    const [first, ...others] = await measureFirstInvocations(
      {
        bundlePath: bundles.handlerPath,
        environment: harness.environment,
        token,
        runs: settings.firstInvocationRuns,
        warmCallsPerRun: settings.warmCallsPerRun,
      },
      extras.map((extra) => extra.path),
    );
    if (first === undefined) throw new Error("the handler was not measured");
    warmDurationMs = first.warm.median;
    rows.push(
      infoRow(
        "2",
        `Loopback, plain HTTP, no RTT: import + first create, median (p90), ${first.first.count} processes`,
        `${ms(first.first.median)} (${ms(first.first.p90)})`,
      ),
      infoRow(
        "2",
        `Later creates on the warm instance against dynalite, median (p99), ${first.warm.count} calls`,
        `${ms(first.warm.median)} (${ms(first.warm.p99)})`,
      ),
    );
    for (const [index, extra] of extras.entries()) {
      const result = others[index];
      if (result === undefined) continue;
      rows.push(
        infoRow(
          "2",
          `${extra.name}, loopback: first create; later creates, median (p99)`,
          `${ms(result.first.median)}; ${ms(result.warm.median)} (${ms(result.warm.p99)})`,
        ),
      );
    }
    notes.push(
      `first invocation on loopback: the import part ${ms(first.importOnly.median)} median, ` +
        `the first create ${ms(first.first.median - first.importOnly.median)} (difference of medians)`,
    );
  });

  await section("3", "Warm handler CPU", async () => {
    const warm = await measureWarmCpu(harness.environment, token, settings.cpuCreates);
    createCpuMicros = warm.createCpuMicros.median;
    rows.push(
      infoRow(
        "3",
        `Warm create, in-memory store: CPU per create, median (p90) of ${warm.createCpuMicros.count} blocks`,
        `${micros(warm.createCpuMicros.median)} (${micros(warm.createCpuMicros.p90)})`,
      ),
      infoRow(
        "3",
        "Token verification alone (authenticate), CPU per call",
        `${micros(warm.verifyCpuMicros.median)} (${micros(warm.verifyCpuMicros.p90)})`,
      ),
      budgetRow(
        "3",
        "Warm CPU ratio, create / verification alone (medians)",
        times(warm.ratio),
        warm.ratio,
        BUDGET.warmCpuRatio,
        `≤ ${BUDGET.warmCpuRatio}×`,
      ),
    );
    notes.push(
      `warm wall time per call: create ${micros(warm.createWallMicros.median)}, ` +
        `verification ${micros(warm.verifyWallMicros.median)} (medians)`,
    );
  });
} finally {
  await harness.close();
}

await section("4", "Local end-to-end load", async () => {
  const load = await measureLocalLoad({
    connections: settings.loadConnections,
    seconds: settings.loadSeconds,
    warmUpSeconds: settings.loadWarmUpSeconds,
  });
  const describe = (result: typeof load.localPath) =>
    `${result.createsPerSecond.toFixed(0)}/s, p50 ${ms(result.latency.median)}, p99 ${ms(result.latency.p99)}`;
  rows.push(
    infoRow(
      "4",
      `Local path (npm start's API), ${settings.loadConnections} connections, ${settings.loadSeconds} s: ${load.localPath.creates} creates`,
      describe(load.localPath),
    ),
    infoRow(
      "4",
      `Raw PutItem to dynalite, same connections, same ${load.rawStore.creates} writes`,
      describe(load.rawStore),
    ),
    budgetRow(
      "4",
      "Local path ratio, raw creates/s over local creates/s",
      `${times(load.ratio)} (p50 latency ${times(load.latencyRatio)})`,
      load.ratio,
      BUDGET.localPathRatio,
      `≤ ${BUDGET.localPathRatio}×`,
    ),
  );
});

await section("5", "Cost", async () => {
  if (warmDurationMs === undefined || createCpuMicros === undefined) {
    throw new Error("needs the warm duration (2) and the warm CPU (3)");
  }
  const measured = costPerMillionCreates(warmDurationMs, memoryMb);
  const low = costPerMillionCreates(
    estimatedAwsDurationMs(createCpuMicros, memoryMb, AWS_STORE_ROUND_TRIP_MS.low),
    memoryMb,
  );
  const high = costPerMillionCreates(
    estimatedAwsDurationMs(createCpuMicros, memoryMb, AWS_STORE_ROUND_TRIP_MS.high),
    memoryMb,
  );
  rows.push(
    infoRow(
      "5",
      `Cost per 1M creates, measured duration ${ms(measured.durationMs)} → billed ${measured.billedMs} ms, ${memoryMb} MB arm64`,
      usd(measured.totalUsd),
    ),
    infoRow(
      "5",
      `Cost per 1M creates, AWS estimate: billed ${low.billedMs}–${high.billedMs} ms (DynamoDB ${AWS_STORE_ROUND_TRIP_MS.low}–${AWS_STORE_ROUND_TRIP_MS.high} ms)`,
      `${usd(low.totalUsd)}–${usd(high.totalUsd)}`,
    ),
  );
  notes.push(
    `cost per 1M creates (measured duration): Lambda compute ${usd(measured.lambdaComputeUsd)}, ` +
      `Lambda requests ${usd(measured.lambdaRequestsUsd)}, HTTP API ${usd(measured.httpApiUsd)}, ` +
      `DynamoDB writes ${usd(measured.dynamoDbUsd)}; ${PRICES_REGION} prices of ${PRICES_READ_ON} (bench/prices.ts)`,
  );
});

await section("6", "Request parser, worst-case bodies", async () => {
  rows.push(...(await measureParserRows("6", settings.parserRounds)));
});

const cpu = cpus()[0]?.model ?? "unknown CPU";
console.log(
  `\nPlant Store benchmarks: node ${process.version}, ${availableParallelism()} × ${cpu}, ` +
    `load average ${loadavg()
      .map((load) => load.toFixed(2))
      .join(" ")}, ${((performance.now() - startedAt) / 1000).toFixed(0)} s\n`,
);
console.log(renderTable(rows));
console.log(`\n${notes.map((note) => `- ${note}`).join("\n")}`);

const failed = rows.filter((row) => row.verdict === "FAIL" || row.verdict === "ERROR");
if (failed.length > 0) console.log(`\n${failed.length} result(s) did not meet the budget or did not run.`);
if (process.env.BENCH_STRICT === "1" && failed.length > 0) process.exitCode = 1;

/**
 * BENCH_COLD_EXTRA_BUNDLES=name=path[=prewarmed],…: more bundles (another commit's, say) measured beside
 * the shipped one; `prewarmed` says the bundle opens its store connection at init.
 */
function extraBundles(): { name: string; path: string; storePrewarmed: boolean }[] {
  return (process.env.BENCH_COLD_EXTRA_BUNDLES ?? "")
    .split(",")
    .filter((entry) => entry.includes("="))
    .map((entry) => {
      const [name = "", path = "", prewarmed] = entry.split("=");
      return { name: `extra bundle ${name}`, path, storePrewarmed: prewarmed === "prewarmed" };
    });
}

function signed(value: number): string {
  return `${value >= 0 ? "+" : ""}${value.toFixed(1)}`;
}

function rttLabel({ storeMs, issuerMs }: RoundTrips): string {
  return storeMs === 0 && issuerMs === 0 ? "RTT 0" : `RTT store ${storeMs} ms, issuer ${issuerMs} ms`;
}

/**
 * What the cold path measures, with the network time the model predicts (in round trips): a new
 * connection and one request cost 3; the handler verifies the token (a new connection to the issuer)
 * before it writes, on a connection opened at init when the store is prewarmed, else on a new one.
 */
function coldPathSubjects(bundles: BenchBundles): ColdPathSubject[] {
  const newConnection = (rtt: number) => NEW_CONNECTION_ROUND_TRIPS * rtt;
  const extra = extraBundles();
  const handlers = [
    { name: HANDLER, path: bundles.handlerPath, storePrewarmed: true },
    ...bundles.leverVariants.map((variant) => ({ ...variant, name: `handler ${variant.name}` })),
    ...extra,
  ];
  return [
    { name: STORE_FLOOR, bundlePath: bundles.storeFloorPath, networkMs: (rtt) => newConnection(rtt.storeMs) },
    {
      name: VERIFYING_FLOOR,
      bundlePath: bundles.verifyingFloorPath,
      networkMs: (rtt) => Math.max(newConnection(rtt.storeMs), newConnection(rtt.issuerMs)),
    },
    ...handlers.map(({ name, path, storePrewarmed }) => ({
      name,
      bundlePath: path,
      networkMs: (rtt: RoundTrips) =>
        newConnection(rtt.issuerMs) + (storePrewarmed ? rtt.storeMs : newConnection(rtt.storeMs)),
    })),
  ];
}
