/**
 * The bench's report (bench/report.ts) prints every row a user reads, from made-up measurements: each
 * subject's first answer and warm creates at both budget conditions, its size, import and warm CPU, each
 * memory size with its cost, each budget with its verdict, and a closing line naming what was missed.
 */
import { describe, expect, it } from "vitest";
import {
  AWS_LITE_PEER,
  EMPTY_HANDLER,
  HANDLER,
  ISSUER_FREE_FLOOR,
  SDK_V3_PEER,
  STORE_FLOOR,
} from "../../bench/bundles.ts";
import { chooseMemorySize, memoryRows } from "../../bench/memory.ts";
import { renderReport } from "../../bench/report.ts";
import { answered, condition } from "./made-up-measurements.ts";

const LEVER = "handler without store prewarm";
const NAMES = [EMPTY_HANDLER, STORE_FLOOR, ISSUER_FREE_FLOOR, HANDLER, LEVER, SDK_V3_PEER, AWS_LITE_PEER];
const SHOWN = NAMES.filter((name) => name !== EMPTY_HANDLER);

const subjects = NAMES.map((name, index) => ({ name, bundlePath: `${name}.mjs`, bytes: 1024 * (index + 1) }));
const atSize = (memoryMb: number, handlerMs: number, failed = 0) =>
  condition({ [ISSUER_FREE_FLOOR]: answered(handlerMs), [HANDLER]: answered(handlerMs, failed) }, memoryMb);

const { markdown, budgets } = renderReport({
  heading: "Plant Store bench at abc1234",
  subjects,
  conditions: [
    condition({
      ...Object.fromEntries(NAMES.map((name) => [name, answered(name === EMPTY_HANDLER ? 1 : 50)])),
      [SDK_V3_PEER]: answered(200),
      [AWS_LITE_PEER]: answered(100),
    }),
    condition(
      {
        [ISSUER_FREE_FLOOR]: answered(50),
        [HANDLER]: answered(70),
        [SDK_V3_PEER]: answered(200),
        [AWS_LITE_PEER]: answered(100),
      },
      1024,
    ),
    atSize(128, 1000, 1),
    atSize(256, 300),
    atSize(512, 150),
    atSize(1769, 65),
  ],
});

/** The cells of the rows that start with `first`, in the order they are printed. */
function rowsOf(first: string): string[][] {
  return markdown
    .split("\n")
    .map((line) => line.split("|").map((cell) => cell.trim()))
    .filter((cells) => cells[1] === first)
    .map((cells) => cells.slice(1, -1));
}

describe("the bench's report", () => {
  it("prints each subject's first answer and warm creates at both conditions, size, import, warm CPU", () => {
    for (const name of SHOWN) expect(rowsOf(name)).toHaveLength(2);
    expect(rowsOf(EMPTY_HANDLER)).toEqual([]);
    const [firstAnswers, information] = rowsOf(HANDLER);
    expect(firstAnswers).toEqual([
      HANDLER,
      "50.0 (45.0–55.0) ms",
      "1.00×",
      "7.0 (8.4) ms",
      "70.0 (63.0–77.0) ms",
      "1.40×",
      "7.0 (8.4) ms",
    ]);
    expect(information).toEqual([HANDLER, "4.0 KiB", "25.0 ms, 50.00×", "1000 µs, 1.00×"]);
    expect(rowsOf(LEVER)[0]?.slice(4)).toEqual(["—", "—", "—"]);
  });

  it("prints each memory size with its share, first answer, failed processes counted, and cost", () => {
    const sizes = ["128 MB", "256 MB", "512 MB", "1024 MB", "1769 MB"].map((size) => rowsOf(size)[0]);
    expect(sizes.map((row) => row?.[1])).toEqual(["7.2%", "14.5%", "28.9%", "57.9%", "100.0%"]);
    expect(sizes[0]?.[2]).toBe("1000.0 (900.0–1100.0) ms; 503 in 1 of 21");
    for (const row of sizes) expect(row?.[5]).toMatch(/^\$\d\.\d{3}$/);
    expect(markdown).toMatch(/Default memory by the rule \([^)]*\): 1024 MB/);
  });

  it("never chooses a size by the rule where a process of the handler did not answer 200", () => {
    const rows = memoryRows([atSize(128, 40, 1), atSize(256, 41), atSize(1024, 60)]);
    expect(chooseMemorySize(rows).memoryMb).toBe(256);
  });

  it("prints each budget at both conditions with its verdict, and names the missed ones last", () => {
    expect(budgets.map((row) => [row.condition, row.verdict])).toEqual([
      ["full core", "PASS"],
      ["full core", "PASS"],
      ["full core", "PASS"],
      ["1024 MB", "FAIL"],
      ["1024 MB", "PASS"],
      ["1024 MB", "PASS"],
    ]);
    expect(rowsOf("1024 MB").at(-3)).toEqual([
      "1024 MB",
      `${HANDLER} / ${ISSUER_FREE_FLOOR} ≤ 1.3×`,
      "1.40×",
      "FAIL",
    ]);
    expect(markdown.trimEnd().split("\n").at(-1)).toBe(
      `Missed 1: 1024 MB "${HANDLER} / ${ISSUER_FREE_FLOOR} ≤ 1.3×" (1.40×).`,
    );
  });
});
