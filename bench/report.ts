export type Verdict = "PASS" | "FAIL" | "info" | "ERROR";

export interface Row {
  item: string;
  result: string;
  measured: string;
  budget: string;
  verdict: Verdict;
}

/** A row checked against an upper bound. */
export function budgetRow(
  item: string,
  result: string,
  measured: string,
  value: number,
  limit: number,
  budget: string,
): Row {
  return { item, result, measured, budget, verdict: value <= limit ? "PASS" : "FAIL" };
}

/**
 * A row that cannot pass because a process it rests on did not answer 200: FAIL when the subject
 * budgeted failed (a budget is not met by a process that failed), ERROR when it cannot be read or when
 * no process should fail where it was measured.
 */
export function failedRow(
  item: string,
  result: string,
  measured: string,
  budget: string,
  verdict: "FAIL" | "ERROR",
): Row {
  return { item, result, measured, budget, verdict };
}

export function infoRow(item: string, result: string, measured: string): Row {
  return { item, result, measured, budget: "—", verdict: "info" };
}

export function errorRow(item: string, result: string, error: unknown): Row {
  const message = (error instanceof Error ? (error.message.split("\n")[0] ?? "") : String(error)).slice(
    0,
    40,
  );
  return { item, result, measured: `error: ${message}`, budget: "—", verdict: "ERROR" };
}

/** The result table, as renderGrid() lays it out. */
export function renderTable(rows: Row[]): string {
  const header = ["#", "Result", "Measured", "Budget", "Verdict"];
  return renderGrid(
    header,
    rows.map((row) => [row.item, row.result, row.measured, row.budget, row.verdict]),
  );
}

/** A Markdown table, its columns padded so that it reads in a terminal and pastes into a document. */
export function renderGrid(header: string[], body: string[][]): string {
  const cells = [header, ...body];
  const widths = header.map((_, column) => Math.max(...cells.map((line) => (line[column] ?? "").length)));
  const line = (values: string[]) =>
    `| ${values.map((value, column) => value.padEnd(widths[column] ?? 0)).join(" | ")} |`;
  const rule = `|${widths.map((width) => "-".repeat(width + 2)).join("|")}|`;
  return [line(header), rule, ...cells.slice(1).map(line)].join("\n");
}

export const ms = (value: number) => `${value.toFixed(1)} ms`;
/** A median and its p10–p90 spread, in ms: "99.0 (97.8–104.2) ms". */
export const spread = (summary: { median: number; p10: number; p90: number }) =>
  `${summary.median.toFixed(1)} (${summary.p10.toFixed(1)}–${summary.p90.toFixed(1)}) ms`;
export const micros = (value: number) => `${value.toFixed(0)} µs`;
export const times = (value: number) => `${value.toFixed(2)}×`;
export const usd = (value: number, digits = 3) => `$${value.toFixed(digits)}`;
