/**
 * The cold path at the memory sizes a team would deploy: each size's CPU share imitated with a cgroup
 * quota (bench/cpu-share.ts), read two ways, since it is not known here whether Lambda gives init more
 * CPU than the share: the whole process at the share, and the import (init) at a whole core with the
 * invocations at the share. Per size: the shipped handler's first answer, its ratio to the floor's
 * (the issuer-free floor) at the same share, the warm create, the cost per million creates at that warm duration, and the size the rule
 * chooses.
 */
import {
  type ColdPathCondition,
  type ColdPathConditionSpec,
  type ColdPathSubject,
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

export interface InitReading {
  first: Summary;
  /** First answer over the floor's, same share, same reading (medians). */
  versusFloor: number;
  floorFirst: Summary;
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
  const reading = (initAtFullCore: boolean): InitReading | undefined => {
    const condition = measured.find(
      (candidate) =>
        candidate.share?.procsFile === share.procsFile &&
        candidate.share.initAtFullCore === initAtFullCore &&
        candidate.roundTrips === setup.roundTrips,
    );
    const first = condition?.firstMs.get(setup.handlerName);
    const floorFirst = condition?.firstMs.get(setup.floorName);
    if (first === undefined || floorFirst === undefined) return undefined;
    return { first, floorFirst, versusFloor: first.median / floorFirst.median };
  };
  const atShare = reading(false);
  const warm = measured
    .find((candidate) => candidate.share?.procsFile === share.procsFile && !candidate.share.initAtFullCore)
    ?.warmMs.get(setup.handlerName);
  return {
    memoryMb: share.memoryMb,
    fraction: share.fraction,
    atShare,
    initAtFullCore: reading(true),
    warm,
    cost: warm === undefined ? undefined : costPerMillionCreates(warm.median, share.memoryMb),
  };
}

/**
 * The rule: the smallest size whose first answer (whole process at the share, the cautious reading) is
 * within 10% of the best measured, while its cost per million creates is within 5% of the cheapest.
 * When none meets both (on a loaded machine two sizes' medians can swap), the fastest of those within
 * the cost bound: cost is the bound, latency what is bought with it.
 */
export function chooseMemorySize(rows: MemorySizeRow[]): MemorySizeChoice {
  const measured = rows.filter((row) => row.atShare !== undefined && row.cost !== undefined);
  if (measured.length === 0) return { memoryMb: undefined, reason: "no size was measured" };
  const best = Math.min(...measured.map((row) => row.atShare?.first.median ?? Number.POSITIVE_INFINITY));
  const cheapest = Math.min(...measured.map((row) => row.cost?.totalUsd ?? Number.POSITIVE_INFINITY));
  const fastEnough = measured.filter(
    (row) => (row.atShare?.first.median ?? Number.POSITIVE_INFINITY) <= CHOICE_RULE.firstAnswerWithin * best,
  );
  const cheapEnough = measured.filter(
    (row) => (row.cost?.totalUsd ?? Number.POSITIVE_INFINITY) <= CHOICE_RULE.costWithin * cheapest,
  );
  const both = fastEnough.filter((row) => cheapEnough.includes(row));
  const sizes = (list: MemorySizeRow[]) => list.map((row) => `${row.memoryMb}`).join(", ") || "none";
  const reason = `first answer within 10% of the best: ${sizes(fastEnough)} MB; cost within 5%: ${sizes(cheapEnough)} MB`;
  if (both[0] !== undefined) return { memoryMb: both[0].memoryMb, reason };
  const fastestAffordable = [...cheapEnough].sort(
    (a, b) =>
      (a.atShare?.first.median ?? Number.POSITIVE_INFINITY) -
      (b.atShare?.first.median ?? Number.POSITIVE_INFINITY),
  )[0];
  return { memoryMb: fastestAffordable?.memoryMb, reason: `${reason}; none both, so the fastest within 5%` };
}
