/**
 * Item M: the cold path at Lambda's CPU share for each memory size (bench/memory-sizes.ts), the shipped
 * handler (the issuer's keys delivered) beside the issuer-free floor; the size the rule chooses, and the
 * cold-path CPU budget at the default memory's share.
 */
import type { BenchBundles } from "../bundles.ts";
import {
  type ColdPathCondition,
  type FailedProcesses,
  failedCount,
  failedSummary,
  type RoundTrips,
} from "../cold-path.ts";
import {
  CHOICE_RULE,
  chooseMemorySize,
  type InitReading,
  type MemorySizeRow,
  measureMemorySizes,
} from "../memory-sizes.ts";
import { budgetRow, failedRow, infoRow, ms, type Row, renderGrid, spread, times, usd } from "../report.ts";
import { COLD_PATH_BUDGET } from "./cold-path-item.ts";
import {
  answeredCell,
  coldPathSubjects,
  conditionJson,
  HANDLER,
  ISSUER_FREE_FLOOR,
  rttLabel,
  ZERO,
} from "./cold-path-subjects.ts";
import { type ItemResult, withHarness } from "./item.ts";

export interface MemoryItemSetup {
  bundles: BenchBundles;
  roundTrips: RoundTrips;
  rounds: number;
  warmCalls: number;
  /** The stack's default memory size: where the CPU budget is read. */
  memoryMb: number;
}

export async function memoryItem(setup: MemoryItemSetup): Promise<ItemResult> {
  const { memoryMb } = setup;
  const result = await withHarness(({ environment, token, deliveredKeySet }) =>
    measureMemorySizes({
      subjects: coldPathSubjects(setup.bundles, []),
      floorName: ISSUER_FREE_FLOOR,
      handlerName: HANDLER,
      environment,
      token,
      deliveredKeySet,
      roundTrips: setup.roundTrips,
      rounds: setup.rounds,
      warmCalls: setup.warmCalls,
      extraAtShare: { memoryMb, roundTrips: ZERO, subjectNames: [ISSUER_FREE_FLOOR, HANDLER] },
    }),
  );
  const choice = chooseMemorySize(result.rows);
  const rows: Row[] = [];
  const notes: string[] = [];
  for (const row of result.rows) {
    if (row.notMeasured !== undefined) {
      rows.push(infoRow("M", `${row.memoryMb} MB share`, "not measured (no cgroup)"));
      notes.push(`${row.memoryMb} MB not measured: ${row.notMeasured}`);
    }
  }
  rows.push(
    infoRow(
      "M",
      "Default memory by the rule (see the memory table)",
      choice.memoryMb === undefined ? "no size meets both" : `${choice.memoryMb} MB`,
    ),
    infoRow("M", "Default memory configured (infra/config.ts)", `${memoryMb} MB`),
    ...cpuBudgetAtShareRows(result.extra, memoryMb),
  );
  notes.push(`memory rule: ${choice.reason}`);
  // Under the memory table, which is always printed; results.json has them in its rows.
  const failures = failureLines(result.rows, result.extra, memoryMb);
  if (result.cgroupsLeft.length > 0) notes.push(`cgroups not removed: ${result.cgroupsLeft.join(", ")}`);
  return {
    rows,
    notes,
    json: {
      memorySizes: {
        rows: result.rows,
        choice,
        rule: CHOICE_RULE,
        extra: result.extra && conditionJson(result.extra),
      },
    },
    appendix: [
      `Memory sizes, ${rttLabel(setup.roundTrips)}, ${setup.rounds} rounds`,
      memoryTable(result.rows),
      ...failures.map((line) => `- ${line}`),
    ].join("\n"),
  };
}

/**
 * The handler's first answer over the issuer-free floor's at the default memory's share, RTT 0. A
 * process of the handler that did not answer 200 fails the budget; one of the floor's leaves it unread.
 */
export function cpuBudgetAtShareRows(extra: ColdPathCondition | undefined, memoryMb: number): Row[] {
  const label = `${memoryMb} MB share, RTT 0`;
  if (extra === undefined) {
    return [infoRow("M", `${label}: cold-path CPU budget`, "not measured (no cgroup)")];
  }
  const floor = extra.firstMs.get(ISSUER_FREE_FLOOR);
  const handler = extra.firstMs.get(HANDLER);
  const floorFailed = extra.firstFailed.get(ISSUER_FREE_FLOOR);
  const handlerFailed = extra.firstFailed.get(HANDLER);
  const limit = COLD_PATH_BUDGET.versusIssuerFreeFloor;
  const result = `${label}: CPU budget, handler / issuer-free floor`;
  const ratio = floor !== undefined && handler !== undefined ? handler.median / floor.median : undefined;
  const rows = [
    infoRow("M", `${label}: ${ISSUER_FREE_FLOOR}`, answeredCell(floor && spread(floor), floorFailed)),
    infoRow("M", `${label}: ${HANDLER}`, answeredCell(handler && spread(handler), handlerFailed)),
  ];
  const ofAnswered = ratio === undefined ? "" : `; ${times(ratio)} of those that answered`;
  if (handlerFailed !== undefined) {
    return [
      ...rows,
      failedRow("M", result, `handler ${failedCount(handlerFailed)}${ofAnswered}`, `≤ ${limit}×`, "FAIL"),
    ];
  }
  if (floorFailed !== undefined || ratio === undefined) {
    const why = floorFailed === undefined ? "not measured" : `floor ${failedCount(floorFailed)}${ofAnswered}`;
    return [...rows, failedRow("M", result, why, `≤ ${limit}×`, "ERROR")];
  }
  return [...rows, budgetRow("M", result, times(ratio), ratio, limit, `≤ ${limit}×`)];
}

/**
 * One line per reading in which a process did not answer 200: the size, the reading, the subject, how
 * many, and the first one's status, message and time.
 */
function failureLines(
  memoryRows: MemorySizeRow[],
  extra: ColdPathCondition | undefined,
  memoryMb: number,
): string[] {
  const line = (where: string, subject: string, failed: FailedProcesses | undefined) => {
    const first = failed?.answers[0];
    return failed === undefined || first === undefined
      ? []
      : [`${where}: ${subject} ${failedSummary(failed)} (after ${ms(first.afterMs)})`];
  };
  return [
    ...memoryRows.flatMap((row) => [
      ...line(`${row.memoryMb} MB, init at share`, HANDLER, row.atShare?.failed),
      ...line(`${row.memoryMb} MB, init at share`, ISSUER_FREE_FLOOR, row.atShare?.floorFailed),
      ...line(`${row.memoryMb} MB, init at full core`, HANDLER, row.initAtFullCore?.failed),
      ...line(`${row.memoryMb} MB, init at full core`, ISSUER_FREE_FLOOR, row.initAtFullCore?.floorFailed),
      ...line(`${row.memoryMb} MB, warm create`, HANDLER, row.warmFailed),
    ]),
    ...line(`${memoryMb} MB share, RTT 0`, HANDLER, extra?.firstFailed.get(HANDLER)),
    ...line(`${memoryMb} MB share, RTT 0`, ISSUER_FREE_FLOOR, extra?.firstFailed.get(ISSUER_FREE_FLOOR)),
  ];
}

/**
 * One line per memory size: the two readings of the first answer, the warm create, the cost. Processes
 * that did not answer 200 are counted in their cell ("503 in 1 of 5"); the times and ratios are of those
 * that did, shown only when any did.
 */
export function memoryTable(memoryRows: MemorySizeRow[]): string {
  const header = [
    "Memory",
    "CPU",
    "First answer, init at share",
    "× floor",
    "Init at full core",
    "× floor",
    "Warm",
    "$/1M",
  ];
  const first = (reading: InitReading | undefined) =>
    answeredCell(reading?.first && spread(reading.first), reading?.failed);
  const versusFloor = (reading: InitReading | undefined) => {
    const ratio = reading?.versusFloor === undefined ? "—" : times(reading.versusFloor);
    return reading?.floorFailed === undefined ? ratio : `${ratio}; floor ${failedCount(reading.floorFailed)}`;
  };
  const body = memoryRows.map((row) => {
    const share = `${(row.fraction * 100).toFixed(1)}%`;
    if (row.notMeasured !== undefined)
      return [`${row.memoryMb} MB`, share, "not measured", "", "", "", "", ""];
    return [
      `${row.memoryMb} MB`,
      share,
      first(row.atShare),
      versusFloor(row.atShare),
      first(row.initAtFullCore),
      versusFloor(row.initAtFullCore),
      answeredCell(row.warm && ms(row.warm.median), row.warmFailed),
      row.cost === undefined ? "—" : usd(row.cost.totalUsd),
    ];
  });
  return renderGrid(header, body);
}
