/**
 * `npm run bench`: cold start, the cold path as AWS sees it, first invocation, warm CPU, local load,
 * cost and the request parser, each item a function of bench/items/ returning its rows, printed as one
 * table. Every budget is a ratio to a floor measured in the same run. It is a report: it exits 0 even
 * when a budget fails, unless BENCH_STRICT=1 (then it fails when any budget row fails or a measurement
 * errors). Counts come from BENCH_* variables (bench/settings.ts); the defaults keep it to a few
 * minutes. `--verbose` adds the details; every figure is also written as JSON to
 * dist/bench/results.json. `--node <path>` (or BENCH_NODE) measures on another Node binary.
 */

import { writeFile } from "node:fs/promises";
import { availableParallelism, cpus, loadavg } from "node:os";
import { requestedOtherNode, runOnNode } from "./bench-node.ts";
import { buildBenchBundles } from "./bundles.ts";
import { coldPathItem } from "./items/cold-path-item.ts";
import { bundleSizeRows, coldStartItem } from "./items/cold-start-item.ts";
import { costItem } from "./items/cost-item.ts";
import { firstInvocationItem } from "./items/first-invocation-item.ts";
import type { ItemResult } from "./items/item.ts";
import { localLoadItem } from "./items/local-load-item.ts";
import { memoryItem } from "./items/memory-item.ts";
import { warmCpuItem } from "./items/warm-cpu-item.ts";
import { measureParserRows } from "./parser.ts";
import { errorRow, type Row, renderTable } from "./report.ts";
import { benchSettings, extraBundles } from "./settings.ts";

const RESULTS_PATH = "dist/bench/results.json";

/** Where docs/PERFORMANCE.md explains each budget a run can miss. */
const EXPLAINED_IN = 'docs/PERFORMANCE.md, section "Budgets not met"';

const otherNode = requestedOtherNode(process.argv.slice(2), process.env);
if (otherNode !== undefined) process.exit(await runOnNode(otherNode, "./run.ts", process.argv.slice(2)));

const verbose = process.argv.includes("--verbose");
const settings = benchSettings(process.env);
const extra = extraBundles(process.env);
/** BENCH_ONLY=2,M: only those items run (the bundle size is always shown). */
const onlyItems = process.env.BENCH_ONLY?.split(",").map((item) => item.trim());
const startedAt = performance.now();

const LEGEND = [
  "first answer: a fresh process, from import to its first create's answer (Lambda's init + first call)",
  "store floor: the least a write must do cold: 1 TLS connection and 1 signed PutItem, plain node:https",
  "issuer-free floor: this API's least, keys delivered: RS256 check, key in hand, then PutItem on a TLS connection from init",
  "verifying floor: the least without them: key set GET + RS256 check beside the store's TLS handshake, then PutItem",
  "delivered keys: the issuer's key set in JWKS_JSON, as the stack gives it to the function (as it ships)",
  "warm floor: a warm instance's least: RS256 check, key kept; PutItem signed, signing key kept, on an open connection",
  "with duties (a floor's information row): plus, done plainly, the claims, the body's checks, a timeout, the answer, a log line",
  `RTT a/b: injected round trips, store a ms, issuer b ms; RTT 0 leaves the CPU part; default ${settings.roundTrips.storeMs}/${settings.roundTrips.issuerMs}`,
  "share: a cgroup CPU quota of memory / 1,769 MB of one core, as Lambda gives (full core: no quota)",
  "item 2 rows, at a full core: first answer, median (p10–p90), × the issuer-free floor, CPU ms of that span",
];

const results: ItemResult[] = [];

/** Runs one item unless BENCH_ONLY leaves it out; a failure becomes an error row, and the run goes on. */
async function item<T extends ItemResult>(
  id: string,
  name: string,
  run: () => Promise<T>,
): Promise<T | undefined> {
  if (onlyItems !== undefined && !onlyItems.includes(id)) return undefined;
  process.stderr.write(`bench: ${name}...\n`);
  try {
    const result = await run();
    results.push(result);
    return result;
  } catch (error) {
    results.push({ rows: [errorRow(id, name, error)] });
    console.error(error);
    return undefined;
  }
}

const bundles = await buildBenchBundles();
results.push({ rows: bundleSizeRows(bundles) });
await item("1", "Cold start: import of the bundle", () => coldStartItem(bundles, settings.importRounds));
const coldPath = await item("2", "Cold path over TLS, full core", () =>
  coldPathItem({ bundles, extra, roundTrips: settings.roundTrips, rounds: settings.coldPathRounds }),
);
await item("M", "Memory sizes: cold path at Lambda's CPU share", () =>
  memoryItem({
    bundles,
    roundTrips: settings.roundTrips,
    rounds: settings.memoryRounds,
    warmCalls: settings.memoryWarmCalls,
    memoryMb: settings.memoryMb,
  }),
);
const firstInvocation = await item("2", "First invocation on loopback", () =>
  firstInvocationItem({
    bundles,
    extra,
    runs: settings.firstInvocationRuns,
    warmCallsPerRun: settings.warmCallsPerRun,
  }),
);
const warmCpu = await item("3", "Warm handler CPU", () =>
  warmCpuItem({ bundles, creates: settings.cpuCreates, extra }),
);
await item("4", "Local end-to-end load", () =>
  localLoadItem({
    connections: settings.loadConnections,
    seconds: settings.loadSeconds,
    warmUpSeconds: settings.loadWarmUpSeconds,
  }),
);
await item("5", "Cost", async () => {
  if (firstInvocation === undefined || warmCpu === undefined) {
    throw new Error("needs the warm duration (2) and the warm CPU (3)");
  }
  return costItem({
    warmDurationMs: firstInvocation.warmDurationMs,
    warmCpu,
    coldCpuBeyondFloorMs: coldPath?.cpuBeyondFloorAtZeroMs,
    memoryMb: settings.memoryMb,
  });
});
await item("6", "Request parser, worst-case bodies", async () => ({
  rows: await measureParserRows("6", settings.parserRounds),
}));

const rows: Row[] = results.flatMap((result) => result.rows);
const notes = results.flatMap((result) => result.notes ?? []);
const cpu = cpus()[0]?.model ?? "unknown CPU";
const seconds = ((performance.now() - startedAt) / 1000).toFixed(0);
const load = loadavg()
  .map((value) => value.toFixed(2))
  .join(" ");
console.log(
  `\nPlant Store benchmarks: node ${process.version}, ${availableParallelism()} × ${cpu}, load ${load}, ${seconds} s\n`,
);
console.log(LEGEND.map((line) => `  ${line}`).join("\n"));
console.log(`\n${renderTable(rows)}`);
for (const result of results) if (result.appendix !== undefined) console.log(`\n${result.appendix}`);
if (verbose) console.log(`\n${notes.map((note) => `- ${note}`).join("\n")}`);
const json = Object.assign({ settings }, ...results.map((result) => result.json ?? {}), { rows, notes });
await writeFile(RESULTS_PATH, `${JSON.stringify(json, null, 2)}\n`);
console.log(`\nEvery figure, with details: ${RESULTS_PATH}${verbose ? "" : " (or run with --verbose)"}`);

const failed = rows.filter((row) => row.verdict === "FAIL" || row.verdict === "ERROR");
if (failed.length === 0) console.log("Every budget met.");
else {
  // An item that threw has one error row (errorRow: "error: …"); other ERROR rows ran, and say what failed.
  const crashed = (row: Row) => row.verdict === "ERROR" && row.measured.startsWith("error: ");
  const names = failed.map(
    (row) => `${row.item} "${row.result}" (${crashed(row) ? "did not run" : row.measured})`,
  );
  console.log(`Missed ${failed.length}: ${names.join("; ")}. Why: ${EXPLAINED_IN}.`);
}
if (process.env.BENCH_STRICT === "1" && failed.length > 0) process.exitCode = 1;
