/**
 * The request parser (lambda/request/lossless-json.ts) on the worst bodies a client can send
 * under the size limit: a long digit run in a number, long runs of escapes in a string, many keys
 * in an object. Each body is parsed beside `JSON.parse` of the same text (the floor: V8's own
 * parser) and beside itself at half the size, all interleaved in one run, so that both checks are
 * ratios measured on the same machine at the same moment:
 * - parseJson / JSON.parse at the size limit: the price of exact integers stays bounded;
 * - parseJson at the size limit / at half of it: about 2 when the parser is linear, 4 when it is
 *   quadratic (as `digits.replace(/0+$/, "")` was: 16,000 digits cost 90 ms instead of 0.02 ms).
 */
import { setImmediate } from "node:timers/promises";
import { parse as parseJson } from "lossless-json";
import { MAX_BODY_BYTES } from "../lambda/request/request-body.ts";
import { budgetRow, micros, type Row, times } from "./report.ts";
import { summarize } from "./stats.ts";

export const PARSER_BUDGET = {
  /** parseJson over JSON.parse, medians, at the size limit, for the worst shape. */
  ratioToJsonParse: 25,
  /** parseJson at the size limit over parseJson at half of it, medians: 2 is linear, 4 quadratic. */
  doublingRatio: 2.6,
} as const;

/** Each sample parses a body this many times over at least this long, so the clock's grain does not matter. */
const MIN_SAMPLE_MS = 1;

interface Shape {
  name: string;
  /** A JSON text of exactly `bytes` bytes (ASCII) of this shape. */
  body(bytes: number): string;
}

/** `head`, then `unit` as many times as fits, then spaces and `tail`: exactly `bytes` long. */
function filled(bytes: number, head: string, unit: string, tail: string): string {
  const room = bytes - head.length - tail.length;
  const units = Math.floor(room / unit.length);
  return `${head}${unit.repeat(units)}${" ".repeat(room - units * unit.length)}${tail}`;
}

const SHAPES: Shape[] = [
  {
    name: "integer of 16 KiB digits",
    body: (bytes) => filled(bytes, '{"id":1', "0", '1,"name":"Fern"}'),
  },
  {
    name: "fraction of 16 KiB digits",
    body: (bytes) => filled(bytes, '{"id":1.', "0", '1,"name":"Fern"}'),
  },
  { name: "name of \\n escapes", body: (bytes) => filled(bytes, '{"id":1,"name":"', "\\n", '"}') },
  {
    name: "name of \\u surrogate pairs",
    body: (bytes) => filled(bytes, '{"id":1,"name":"', "\\ud83c\\udf3f", '"}'),
  },
  {
    name: "object of many keys",
    body: (bytes) => {
      const members: string[] = [];
      let length = 2;
      for (let index = 0; length + `"k${index}":0,`.length < bytes; index++) {
        members.push(`"k${index}":0`);
        length += `"k${index}":0,`.length;
      }
      return filled(bytes, `{${members.join(",")}`, " ", "}");
    },
  },
];

export interface ParserShapeResult {
  shape: string;
  /** Median µs per parse: parseJson and JSON.parse at the size limit, parseJson at half of it. */
  parseMicros: number;
  jsonParseMicros: number;
  halfSizeMicros: number;
  ratioToJsonParse: number;
  doublingRatio: number;
}

/** Median µs per call of each contender, sampled in turns (the order rotating) for `rounds` rounds. */
async function interleaved(contenders: (() => unknown)[], rounds: number): Promise<number[]> {
  const repeats = contenders.map((run) => {
    let count = 1;
    for (;;) {
      const startedAt = performance.now();
      for (let index = 0; index < count; index++) run();
      if (performance.now() - startedAt >= MIN_SAMPLE_MS) return count;
      count *= 2;
    }
  });
  const samples = contenders.map((): number[] => []);
  for (let round = 0; round < rounds; round++) {
    for (let turn = 0; turn < contenders.length; turn++) {
      const which = (round + turn) % contenders.length;
      const run = contenders[which] as () => unknown;
      const count = repeats[which] as number;
      const startedAt = performance.now();
      for (let index = 0; index < count; index++) run();
      samples[which]?.push(((performance.now() - startedAt) * 1000) / count);
    }
    await setImmediate();
  }
  return samples.map((values) => summarize(values).median);
}

/** Measures every shape; nothing else should run in the process meanwhile. */
export async function measureParser(rounds = 40): Promise<ParserShapeResult[]> {
  const results: ParserShapeResult[] = [];
  for (const shape of SHAPES) {
    const full = shape.body(MAX_BODY_BYTES);
    const half = shape.body(MAX_BODY_BYTES / 2);
    if (full.length !== MAX_BODY_BYTES) throw new Error(`${shape.name}: ${full.length} bytes`);
    const [parseMicros = 0, jsonParseMicros = 0, halfSizeMicros = 0] = await interleaved(
      [() => parseJson(full), () => JSON.parse(full), () => parseJson(half)],
      rounds,
    );
    results.push({
      shape: shape.name,
      parseMicros,
      jsonParseMicros,
      halfSizeMicros,
      ratioToJsonParse: parseMicros / jsonParseMicros,
      doublingRatio: parseMicros / halfSizeMicros,
    });
  }
  return results;
}

/**
 * The report's rows: per shape, the ratio to JSON.parse and the doubling ratio, each against its
 * budget in PARSER_BUDGET. For bench/run.ts: `rows.push(...(await measureParserRows("6")))`.
 */
export async function measureParserRows(item: string, rounds?: number): Promise<Row[]> {
  const rows: Row[] = [];
  for (const result of await measureParser(rounds)) {
    rows.push(
      budgetRow(
        item,
        `Parser, ${result.shape}, vs JSON.parse`,
        `${times(result.ratioToJsonParse)} (${micros(result.parseMicros)} / ${micros(result.jsonParseMicros)})`,
        result.ratioToJsonParse,
        PARSER_BUDGET.ratioToJsonParse,
        `≤ ${PARSER_BUDGET.ratioToJsonParse}×`,
      ),
      budgetRow(
        item,
        `Parser, ${result.shape}, 16 vs 8 KiB`,
        `${times(result.doublingRatio)} (${micros(result.parseMicros)} / ${micros(result.halfSizeMicros)})`,
        result.doublingRatio,
        PARSER_BUDGET.doublingRatio,
        `≤ ${PARSER_BUDGET.doublingRatio}×`,
      ),
    );
  }
  return rows;
}
