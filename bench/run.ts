/**
 * `npm run bench`: the first answer of fresh processes over TLS with injected round trips, at a full core
 * and at each memory size's CPU share, the shipped handler beside the floors and the peers, interleaved
 * in one run; the budgets are ratios measured in it (bench/budgets.ts). The report goes to stdout and to
 * dist/bench/report.md. It exits 0 even when a budget is missed, unless BENCH_STRICT=1. `--node <path>`
 * (or BENCH_NODE) measures on another Node binary; BENCH_* variables set the counts (bench/settings.ts).
 */
import { execFileSync } from "node:child_process";
import { writeFile } from "node:fs/promises";
import { availableParallelism, cpus, loadavg } from "node:os";
import { startHarness } from "../support/harness.ts";
import { requestedOtherNode, runOnNode } from "./bench-node.ts";
import { BUDGET_MEMORY_MB, failsStrictRun } from "./budgets.ts";
import {
  AWS_LITE_PEER,
  buildSubjects,
  EMPTY_HANDLER,
  HANDLER,
  ISSUER_FREE_FLOOR,
  LEVER_VARIANTS,
  SDK_V3_PEER,
  STORE_FLOOR,
} from "./bundles.ts";
import { type Condition, type ConditionResult, measureColdPath } from "./cold-path.ts";
import { MEMORY_SIZES_MB } from "./memory.ts";
import { renderReport } from "./report.ts";
import { benchSettings } from "./settings.ts";

const REPORT_PATH = "dist/bench/report.md";

const otherNode = requestedOtherNode(process.argv.slice(2), process.env);
if (otherNode !== undefined) process.exit(await runOnNode(otherNode, "./run.ts"));

const settings = benchSettings(process.env);
const startedAt = performance.now();
const subjects = await buildSubjects();

const budgeted = [ISSUER_FREE_FLOOR, HANDLER, SDK_V3_PEER, AWS_LITE_PEER];
const conditions: Condition[] = [
  {
    subjectNames: [EMPTY_HANDLER, STORE_FLOOR, ...budgeted, ...LEVER_VARIANTS.map((lever) => lever.name)],
    rounds: settings.rounds,
  },
  ...MEMORY_SIZES_MB.map((memoryMb) =>
    memoryMb === BUDGET_MEMORY_MB
      ? { memoryMb, subjectNames: budgeted, rounds: settings.rounds }
      : { memoryMb, subjectNames: [ISSUER_FREE_FLOOR, HANDLER], rounds: settings.memoryRounds },
  ),
];

const harness = await startHarness();
let measured: ConditionResult[];
try {
  measured = await measureColdPath({
    subjects,
    conditions,
    roundTrips: settings.roundTrips,
    warmCalls: settings.warmCalls,
    environment: harness.environment,
    token: await harness.issuer.mint(),
    deliveredKeySet: JSON.stringify(harness.issuer.jwks),
  });
} finally {
  await harness.close();
}

const seconds = ((performance.now() - startedAt) / 1000).toFixed(0);
const load = loadavg()
  .map((value) => value.toFixed(2))
  .join(" ");
const { storeMs, issuerMs } = settings.roundTrips;
const heading =
  `Plant Store bench at ${commit()}: node ${process.version}, ${availableParallelism()} × ` +
  `${cpus()[0]?.model ?? "unknown CPU"}, load ${load}; RTT ${storeMs}/${issuerMs} ms; ${settings.rounds} ` +
  `rounds (${settings.memoryRounds} at the other sizes), ${settings.warmCalls} warm creates a process; ` +
  `${seconds} s`;
const report = renderReport({ heading, subjects, conditions: measured });
process.stdout.write(`\n${report.markdown}`);
await writeFile(REPORT_PATH, report.markdown);
console.log(`\nThe report, to paste into docs/PERFORMANCE.md: ${REPORT_PATH}`);
if (failsStrictRun(report.budgets, process.env)) process.exitCode = 1;

function commit(): string {
  try {
    const hash = execFileSync("git", ["rev-parse", "--short", "HEAD"], { encoding: "utf8" }).trim();
    const changed = execFileSync("git", ["status", "--porcelain"], { encoding: "utf8" }).trim() !== "";
    return changed ? `${hash} (with uncommitted changes)` : hash;
  } catch {
    return "an unknown commit";
  }
}
