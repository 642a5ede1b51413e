/**
 * The bench's report: four Markdown tables, padded so that they read in a terminal and paste into
 * docs/PERFORMANCE.md as they are, then the closing line. docs/PERFORMANCE.md says what each row means.
 */
import {
  BUDGET_MEMORY_MB,
  type BudgetRow,
  budgetRows,
  conditionLabel,
  failedCount,
  times,
} from "./budgets.ts";
import { EMPTY_HANDLER, HANDLER, ISSUER_FREE_FLOOR, type Subject } from "./bundles.ts";
import type { ConditionResult, Measured } from "./cold-path.ts";
import { CHOICE_RULE, chooseMemorySize, type MemoryRow, memoryRows } from "./memory.ts";
import type { Summary } from "./stats.ts";

export interface BenchResult {
  /** The first line: where and how it ran. */
  heading: string;
  subjects: Subject[];
  /** A full core's (no memoryMb) and each memory size's. */
  conditions: ConditionResult[];
}

export interface Report {
  markdown: string;
  budgets: BudgetRow[];
}

type Pick = (measured: Measured) => Summary | undefined;

export function renderReport({ heading, subjects, conditions }: BenchResult): Report {
  const fullCore = conditions.find((condition) => condition.memoryMb === undefined);
  const budgetConditions = conditions.filter(
    (condition) => condition.memoryMb === undefined || condition.memoryMb === BUDGET_MEMORY_MB,
  );
  const budgets = budgetConditions.flatMap(budgetRows);
  const memory = memoryRows(conditions);
  const names = subjects.map((subject) => subject.name).filter((name) => name !== EMPTY_HANDLER);
  const missed = budgets
    .filter((row) => row.verdict !== "PASS")
    .map((row) => `${row.condition} "${row.budget}" (${row.measured})`);
  const markdown = [
    heading,
    "",
    "First answer, median (p10–p90), × the issuer-free floor's; the warm creates after it, p50 (p99):",
    "",
    firstAnswerTable(names, budgetConditions),
    "",
    "Size, import and warm CPU, at a full core (information):",
    "",
    fullCore === undefined ? "not measured" : informationTable(subjects, fullCore),
    "",
    `Memory sizes: the ${HANDLER} at each CPU share, × the issuer-free floor's first answer at that share:`,
    "",
    memoryTable(memory),
    "",
    ruleLine(memory),
    "",
    grid(
      ["Condition", "Budget", "Measured", "Verdict"],
      budgets.map((row) => [row.condition, row.budget, row.measured, row.verdict]),
    ),
    "",
    missed.length === 0 ? "Every budget met." : `Missed ${missed.length}: ${missed.join("; ")}.`,
  ];
  return { markdown: `${markdown.join("\n")}\n`, budgets };
}

function firstAnswerTable(names: string[], conditions: ConditionResult[]): string {
  const header = conditions.flatMap((condition) => [
    `${conditionLabel(condition)}: first answer`,
    "× floor",
    "warm p50 (p99)",
  ]);
  return grid(
    ["Subject", ...header],
    names.map((name) => [
      name,
      ...conditions.flatMap((condition) => [
        firstCell(condition, name),
        ratioCell(condition, name, ISSUER_FREE_FLOOR, (measured) => measured.first),
        cell(condition, name, warm),
      ]),
    ]),
  );
}

function informationTable(subjects: Subject[], fullCore: ConditionResult): string {
  const importMs: Pick = (measured) => measured.importMs;
  const warmCpuMs: Pick = (measured) => measured.warmCpuMs;
  /** The subject's median, and its ratio to `over`'s. */
  const figure = (name: string, pick: Pick, show: (value: number) => string, over: string) => {
    const median = cell(fullCore, name, (measured) => {
      const summary = pick(measured);
      return summary && show(summary.median);
    });
    return `${median}, ${ratioCell(fullCore, name, over, pick)}`;
  };
  return grid(
    ["Subject", "Bundle", "Import with init, × empty handler", "Warm create CPU, × floor"],
    subjects
      .filter((subject) => subject.name !== EMPTY_HANDLER)
      .map(({ name, bytes }) => [
        name,
        `${(bytes / 1024).toFixed(1)} KiB`,
        figure(name, importMs, ms, EMPTY_HANDLER),
        figure(name, warmCpuMs, (cpuMs) => `${(cpuMs * 1000).toFixed(0)} µs`, ISSUER_FREE_FLOOR),
      ]),
  );
}

function memoryTable(rows: MemoryRow[]): string {
  return grid(
    ["Memory", "CPU", "First answer", "× floor", "Warm p50 (p99)", "$ per 1M creates"],
    rows.map((row) => [
      `${row.memoryMb} MB`,
      `${(row.fraction * 100).toFixed(1)}%`,
      firstCell(row.condition, HANDLER),
      row.versusFloor === undefined ? "—" : times(row.versusFloor),
      cell(row.condition, HANDLER, warm),
      row.costUsd === undefined ? "—" : `$${row.costUsd.toFixed(3)}`,
    ]),
  );
}

function ruleLine(rows: MemoryRow[]): string {
  const { memoryMb, reason } = chooseMemorySize(rows);
  const within = (factor: number) => `${Math.round((factor - 1) * 100)}%`;
  return (
    `Default memory by the rule (the smallest size within ${within(CHOICE_RULE.firstAnswerWithin)} of the ` +
    `best first answer and ${within(CHOICE_RULE.costWithin)} of the cheapest cost): ` +
    `${memoryMb === undefined ? "none" : `${memoryMb} MB`} (${reason}).`
  );
}

/** A subject's figure under a condition; "—" where it has none, "not measured" for a condition not run. */
function cell(condition: ConditionResult, name: string, show: (measured: Measured) => string | undefined) {
  if (condition.notMeasured !== undefined) return "not measured";
  const measured = condition.bySubject.get(name);
  return (measured && show(measured)) ?? "—";
}

/** The first answer of those that answered, and how many did not: "55.0 (…) ms; 503 in 1 of 5". */
function firstCell(condition: ConditionResult, name: string): string {
  return cell(condition, name, (measured) => {
    const answered = measured.first && spread(measured.first);
    if (measured.failed === 0) return answered;
    return answered === undefined ? failedCount(measured) : `${answered}; ${failedCount(measured)}`;
  });
}

/** The subject's median over another's under the same condition. */
function ratioCell(condition: ConditionResult, name: string, over: string, pick: Pick): string {
  const value = pick(condition.bySubject.get(name) ?? { processes: 0, failed: 0 })?.median;
  const base = pick(condition.bySubject.get(over) ?? { processes: 0, failed: 0 })?.median;
  return value === undefined || base === undefined ? "—" : times(value / base);
}

/** A Markdown table, its columns padded. */
export function grid(header: string[], body: string[][]): string {
  const cells = [header, ...body];
  const widths = header.map((_, column) => Math.max(...cells.map((line) => (line[column] ?? "").length)));
  const line = (values: string[]) =>
    `| ${values.map((value, column) => value.padEnd(widths[column] ?? 0)).join(" | ")} |`;
  const rule = `|${widths.map((width) => "-".repeat(width + 2)).join("|")}|`;
  return [line(header), rule, ...cells.slice(1).map(line)].join("\n");
}

const ms = (value: number) => `${value.toFixed(1)} ms`;
const spread = (summary: Summary) =>
  `${summary.median.toFixed(1)} (${summary.p10.toFixed(1)}–${summary.p90.toFixed(1)}) ms`;
const warm = ({ warm: summary }: Measured) =>
  summary && `${summary.median.toFixed(1)} (${summary.p99.toFixed(1)}) ms`;
