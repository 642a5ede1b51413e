/**
 * The cold path at the memory sizes a team would deploy: each size's CPU share imitated with a cgroup
 * quota (bench/cpu-share.ts), read two ways, since it is not known here whether Lambda gives init more
 * CPU than the share: the whole process at the share, and the import (init) at a whole core with the
 * invocations at the share. Per size: the shipped handler's first answer, its ratio to the floor's
 * (the issuer-free floor) at the same share, the warm create, the cost per million creates at that warm duration, and the size the rule
 * chooses. A process whose answer was not a 200 (at 128 MB on a slow hour the store's time limits can
 * pass and it answers 503, as Lambda would) is counted in its size's row; the rule does not choose a
 * size where the handler's did.
 */
import {
  type ColdPathCondition,
  type ColdPathConditionSpec,
  type ColdPathSubject,
  type FailedProcesses,
  measureColdPath,
  type RoundTrips,
} from "./cold-path.ts";
import { type CostPerMillion, costPerMillionCreates, cpuFraction } from "./cost.ts";
import { type CpuShareOutcome, makeCpuShares, removeCpuShares } from "./cpu-share.ts";
import type { Summary } from "./stats.ts";

export const MEMORY_SIZES_MB = [128, 256, 512, 1024, 1769] as const;

/** The rule that picks the default memory size (docs/DEPLOY.md, docs/PERFORMANCE.md). */
export const CHOICE_RULE = { firstAnswerWithin: 1.1, costWithin: 1.05 } as const;

/** The extra condition carries a budget row: three processes per subject a round, 15 at the defaults. */
const EXTRA_PROCESSES_PER_ROUND = 3;

/** One reading at one size: the first answers of the processes that answered 200, and those that did not. */
export interface InitReading {
  /** The handler's first answers that were a 200; absent when none was. */
  first?: Summary;
  /** First answer over the floor's, same share, same reading (medians of those that answered 200). */
  versusFloor?: number;
  floorFirst?: Summary;
  /** The handler's processes whose first answer was not a 200, when any. */
  failed?: FailedProcesses;
  /** The floor's, likewise. */
  floorFailed?: FailedProcesses;
}

export interface MemorySizeRow {
  memoryMb: number;
  fraction: number;
  /** Why the size was not measured (no cgroup could be made). */
  notMeasured?: string;
  atShare?: InitReading;
  initAtFullCore?: InitReading;
  /** Creates after the first, on the warm instance, at the share. */
  warm?: Summary;
  /** The handler's processes a warm create of which was not a 200 (its warm calls stopped there). */
  warmFailed?: FailedProcesses;
  cost?: CostPerMillion;
}

export interface MemorySizeChoice {
  memoryMb: number | undefined;
  /** Which sizes met each half of the rule, for the closing line. */
  reason: string;
}

export interface MemorySizeSetup {
  subjects: ColdPathSubject[];
  floorName: string;
  handlerName: string;
  environment: Record<string, string>;
  token: string;
  /** The issuer's public key set: JWKS_JSON of the subjects that take it. */
  deliveredKeySet: string;
  roundTrips: RoundTrips;
  rounds: number;
  warmCalls: number;
  /** More conditions measured in the same interleaved run at one size's share (the RTT 0 budget). */
  extraAtShare?: { memoryMb: number; roundTrips: RoundTrips; subjectNames: string[] };
}

export interface MemorySizeResult {
  rows: MemorySizeRow[];
  extra: ColdPathCondition | undefined;
  /** Groups that could not be removed (a process still in them): should be empty. */
  cgroupsLeft: string[];
}

export async function measureMemorySizes(setup: MemorySizeSetup): Promise<MemorySizeResult> {
  const outcomes = makeCpuShares(MEMORY_SIZES_MB);
  try {
    const shares = outcomes.flatMap((outcome) => ("share" in outcome ? [outcome.share] : []));
    const subjectNames = [setup.floorName, setup.handlerName];
    const conditions: ColdPathConditionSpec[] = shares.flatMap((share) =>
      [false, true].map((initAtFullCore) => ({
        roundTrips: setup.roundTrips,
        share: { procsFile: share.procsFile, initAtFullCore },
        warmCalls: initAtFullCore ? 0 : setup.warmCalls,
        subjectNames,
      })),
    );
    const extraShare = shares.find((share) => share.memoryMb === setup.extraAtShare?.memoryMb);
    if (setup.extraAtShare !== undefined && extraShare !== undefined) {
      conditions.push({
        roundTrips: setup.extraAtShare.roundTrips,
        share: { procsFile: extraShare.procsFile, initAtFullCore: false },
        warmCalls: 0,
        subjectNames: setup.extraAtShare.subjectNames,
        processesPerRound: EXTRA_PROCESSES_PER_ROUND,
      });
    }
    const measured =
      conditions.length === 0
        ? []
        : await measureColdPath({
            subjects: setup.subjects.filter((subject) =>
              conditions.some((condition) => condition.subjectNames?.includes(subject.name)),
            ),
            environment: setup.environment,
            token: setup.token,
            deliveredKeySet: setup.deliveredKeySet,
            conditions,
            rounds: setup.rounds,
          });
    const rows = outcomes.map((outcome) => rowFor(outcome, measured, setup));
    const extra = setup.extraAtShare !== undefined && extraShare !== undefined ? measured.at(-1) : undefined;
    return { rows, extra, cgroupsLeft: removeCpuShares() };
  } finally {
    removeCpuShares();
  }
}

function rowFor(
  outcome: CpuShareOutcome,
  measured: ColdPathCondition[],
  setup: MemorySizeSetup,
): MemorySizeRow {
  if (!("share" in outcome)) {
    return {
      memoryMb: outcome.memoryMb,
      fraction: cpuFraction(outcome.memoryMb),
      notMeasured: outcome.notMeasured,
    };
  }
  const { share } = outcome;
  const conditionOf = (initAtFullCore: boolean) =>
    measured.find(
      (candidate) =>
        candidate.share?.procsFile === share.procsFile &&
        candidate.share.initAtFullCore === initAtFullCore &&
        candidate.roundTrips === setup.roundTrips,
    );
  const reading = (initAtFullCore: boolean): InitReading | undefined => {
    const condition = conditionOf(initAtFullCore);
    if (condition === undefined) return undefined;
    const first = condition.firstMs.get(setup.handlerName);
    const floorFirst = condition.firstMs.get(setup.floorName);
    return {
      first,
      floorFirst,
      versusFloor:
        first !== undefined && floorFirst !== undefined ? first.median / floorFirst.median : undefined,
      failed: condition.firstFailed.get(setup.handlerName),
      floorFailed: condition.firstFailed.get(setup.floorName),
    };
  };
  const atShare = conditionOf(false);
  const warm = atShare?.warmMs.get(setup.handlerName);
  return {
    memoryMb: share.memoryMb,
    fraction: share.fraction,
    atShare: reading(false),
    initAtFullCore: reading(true),
    warm,
    warmFailed: atShare?.warmFailed.get(setup.handlerName),
    cost: warm === undefined ? undefined : costPerMillionCreates(warm.median, share.memoryMb),
  };
}

/** The handler's processes at this size that answered other than 200, in either reading or warm. */
export function handlerFailures(row: MemorySizeRow): FailedProcesses[] {
  return [row.atShare?.failed, row.initAtFullCore?.failed, row.warmFailed].filter(
    (failed) => failed !== undefined,
  );
}

/**
 * The rule: the smallest size whose first answer (whole process at the share, the cautious reading) is
 * within 10% of the best measured, while its cost per million creates is within 5% of the cheapest.
 * When none meets both (on a loaded machine two sizes' medians can swap), the fastest of those within
 * the cost bound: cost is the bound, latency what is bought with it.
 */
export function chooseMemorySize(rows: MemorySizeRow[]): MemorySizeChoice {
  const failedSizes = rows.filter((row) => handlerFailures(row).length > 0);
  const measured = rows.filter(
    (row) => row.atShare?.first !== undefined && row.cost !== undefined && !failedSizes.includes(row),
  );
  const sizes = (list: MemorySizeRow[]) => list.map((row) => `${row.memoryMb}`).join(", ") || "none";
  // A size where the handler failed is no choice, whatever its answered processes read.
  const leftOut =
    failedSizes.length === 0
      ? ""
      : `; left out, the handler answered other than 200: ${sizes(failedSizes)} MB`;
  if (measured.length === 0) return { memoryMb: undefined, reason: `no size was measured${leftOut}` };
  const firstMedian = (row: MemorySizeRow) => row.atShare?.first?.median ?? Number.POSITIVE_INFINITY;
  const best = Math.min(...measured.map(firstMedian));
  const cheapest = Math.min(...measured.map((row) => row.cost?.totalUsd ?? Number.POSITIVE_INFINITY));
  const fastEnough = measured.filter((row) => firstMedian(row) <= CHOICE_RULE.firstAnswerWithin * best);
  const cheapEnough = measured.filter(
    (row) => (row.cost?.totalUsd ?? Number.POSITIVE_INFINITY) <= CHOICE_RULE.costWithin * cheapest,
  );
  const both = fastEnough.filter((row) => cheapEnough.includes(row));
  const reason = `first answer within 10% of the best: ${sizes(fastEnough)} MB; cost within 5%: ${sizes(cheapEnough)} MB${leftOut}`;
  if (both[0] !== undefined) return { memoryMb: both[0].memoryMb, reason };
  const fastestAffordable = [...cheapEnough].sort((a, b) => firstMedian(a) - firstMedian(b))[0];
  return { memoryMb: fastestAffordable?.memoryMb, reason: `${reason}; none both, so the fastest within 5%` };
}
