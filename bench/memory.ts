/**
 * The memory sizes a team would deploy, each a condition at its CPU share: the shipped handler's first
 * answer beside the issuer-free floor's, its warm creates, what a million creates cost at that warm
 * duration, and the size the rule chooses (infra's default memory rests on it).
 */
import { HANDLER, ISSUER_FREE_FLOOR } from "./bundles.ts";
import type { ConditionResult } from "./cold-path.ts";
import { costPerMillionCreates, cpuFraction } from "./cost.ts";

export const MEMORY_SIZES_MB = [128, 256, 512, 1024, 1769] as const;

/** The rule that picks the default memory size (docs/PERFORMANCE.md, "Memory sizes"). */
export const CHOICE_RULE = { firstAnswerWithin: 1.1, costWithin: 1.05 } as const;

export interface MemoryRow {
  memoryMb: number;
  /** The fraction of one core its share gives. */
  fraction: number;
  condition: ConditionResult;
  /** The handler's first answer over the floor's (medians), when both answered 200 every time. */
  versusFloor?: number;
  /** Per million creates, priced at the handler's warm median. */
  costUsd?: number;
}

export function memoryRows(conditions: ConditionResult[]): MemoryRow[] {
  return conditions
    .filter((condition) => condition.memoryMb !== undefined)
    .sort((a, b) => (a.memoryMb ?? 0) - (b.memoryMb ?? 0))
    .map((condition) => {
      const memoryMb = condition.memoryMb ?? 0;
      const handler = condition.bySubject.get(HANDLER);
      const floor = condition.bySubject.get(ISSUER_FREE_FLOOR);
      const warm = handler?.warm?.median;
      return {
        memoryMb,
        fraction: cpuFraction(memoryMb),
        condition,
        ...(handler?.first && floor?.first ? { versusFloor: handler.first.median / floor.first.median } : {}),
        ...(warm === undefined ? {} : { costUsd: costPerMillionCreates(warm, memoryMb).totalUsd }),
      };
    });
}

/**
 * The rule: the smallest size whose first answer is within 10% of the best measured while its cost per
 * million creates is within 5% of the cheapest; when none meets both (on a loaded machine two sizes'
 * medians can swap), the fastest within the cost bound. A size where a process of the handler did not
 * answer 200 is no choice, whatever its other processes read.
 */
export function chooseMemorySize(rows: MemoryRow[]): { memoryMb?: number; reason: string } {
  const firstOf = (row: MemoryRow) => row.condition.bySubject.get(HANDLER)?.first?.median ?? Infinity;
  const costOf = (row: MemoryRow) => row.costUsd ?? Infinity;
  const candidates = rows.filter(
    (row) =>
      row.condition.bySubject.get(HANDLER)?.failed === 0 && Number.isFinite(firstOf(row) + costOf(row)),
  );
  if (candidates.length === 0) return { reason: "no size was measured with every answer a 200" };
  const best = Math.min(...candidates.map(firstOf));
  const cheapest = Math.min(...candidates.map(costOf));
  const fastEnough = candidates.filter((row) => firstOf(row) <= CHOICE_RULE.firstAnswerWithin * best);
  const cheapEnough = candidates.filter((row) => costOf(row) <= CHOICE_RULE.costWithin * cheapest);
  const sizes = (list: MemoryRow[]) => list.map((row) => row.memoryMb).join(", ") || "none";
  const within = (bound: number) => `${Math.round((bound - 1) * 100)}%`;
  const costWithin = within(CHOICE_RULE.costWithin);
  const reason =
    `first answer within ${within(CHOICE_RULE.firstAnswerWithin)} of the best: ${sizes(fastEnough)} MB; ` +
    `cost within ${costWithin}: ${sizes(cheapEnough)} MB`;
  const both = fastEnough.find((row) => cheapEnough.includes(row));
  if (both !== undefined) return { memoryMb: both.memoryMb, reason };
  const fastest = [...cheapEnough].sort((a, b) => firstOf(a) - firstOf(b))[0];
  return {
    ...(fastest ? { memoryMb: fastest.memoryMb } : {}),
    reason: `${reason}; none both, so the fastest within ${costWithin}`,
  };
}
