/**
 * Item M: the cold path at Lambda's CPU share for each memory size (bench/memory-sizes.ts), the shipped
 * handler (the issuer's keys delivered) beside the issuer-free floor; the size the rule chooses, and the
 * cold-path CPU budget at the default memory's share.
 */
import type { BenchBundles } from "../bundles.ts";
import type { ColdPathCondition, RoundTrips } from "../cold-path.ts";
import { CHOICE_RULE, chooseMemorySize, type MemorySizeRow, measureMemorySizes } from "../memory-sizes.ts";
import { budgetRow, infoRow, ms, type Row, renderGrid, spread, times, usd } from "../report.ts";
import { COLD_PATH_BUDGET } from "./cold-path-item.ts";
import {
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
    appendix: `Memory sizes, ${rttLabel(setup.roundTrips)}, ${setup.rounds} rounds\n${memoryTable(result.rows)}`,
  };
}

/** The handler's first answer over the issuer-free floor's at the default memory's share, RTT 0. */
function cpuBudgetAtShareRows(extra: ColdPathCondition | undefined, memoryMb: number): Row[] {
  const floor = extra?.firstMs.get(ISSUER_FREE_FLOOR);
  const handler = extra?.firstMs.get(HANDLER);
  if (floor === undefined || handler === undefined) {
    return [infoRow("M", `${memoryMb} MB share, RTT 0: cold-path CPU budget`, "not measured (no cgroup)")];
  }
  const ratio = handler.median / floor.median;
  const limit = COLD_PATH_BUDGET.versusIssuerFreeFloor;
  return [
    infoRow("M", `${memoryMb} MB share, RTT 0: ${ISSUER_FREE_FLOOR}`, spread(floor)),
    infoRow("M", `${memoryMb} MB share, RTT 0: ${HANDLER}`, spread(handler)),
    budgetRow(
      "M",
      `${memoryMb} MB share, RTT 0: CPU budget, handler / issuer-free floor`,
      times(ratio),
      ratio,
      limit,
      `≤ ${limit}×`,
    ),
  ];
}

/** One line per memory size: the two readings of the first answer, the warm create, the cost. */
function memoryTable(memoryRows: MemorySizeRow[]): string {
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
  const body = memoryRows.map((row) => {
    const share = `${(row.fraction * 100).toFixed(1)}%`;
    if (row.notMeasured !== undefined)
      return [`${row.memoryMb} MB`, share, "not measured", "", "", "", "", ""];
    return [
      `${row.memoryMb} MB`,
      share,
      row.atShare === undefined ? "—" : spread(row.atShare.first),
      row.atShare === undefined ? "—" : times(row.atShare.versusFloor),
      row.initAtFullCore === undefined ? "—" : spread(row.initAtFullCore.first),
      row.initAtFullCore === undefined ? "—" : times(row.initAtFullCore.versusFloor),
      row.warm === undefined ? "—" : ms(row.warm.median),
      row.cost === undefined ? "—" : usd(row.cost.totalUsd),
    ];
  });
  return renderGrid(header, body);
}
