/**
 * Item 2: the cold path over TLS at a full core, at the default round trips and at zero, every subject
 * interleaved; the handler's first answer (the keys delivered, as it ships) against the issuer-free
 * floor's, and at the default round trips against the verifying floor's (the least before the keys were
 * delivered).
 */
import { rm } from "node:fs/promises";
import type { BenchBundles } from "../bundles.ts";
import {
  type ColdPathCondition,
  type ColdPathSubject,
  failedSummary,
  measureColdPath,
  type RoundTrips,
} from "../cold-path.ts";
import { budgetRow, failedRow, infoRow, type Row, spread, times } from "../report.ts";
import type { Summary } from "../stats.ts";
import {
  answeredCell,
  COMPILE_CACHE_DIRECTORY,
  coldPathSubjects,
  conditionJson,
  type ExtraBundle,
  type FirstAnswer,
  firstAnswerOf,
  HANDLER,
  ISSUER_FREE_FLOOR,
  rttLabel,
  VERIFYING_FLOOR,
  ZERO,
} from "./cold-path-subjects.ts";
import { type ItemResult, withHarness } from "./item.ts";

/**
 * The handler's first answer: over the issuer-free floor's, at the default round trips and at zero (the
 * CPU part); over the verifying floor's at the default round trips (what delivering the keys must save).
 */
export const COLD_PATH_BUDGET = { versusIssuerFreeFloor: 1.1, versusVerifyingFloor: 0.6 } as const;

export interface ColdPathItemSetup {
  bundles: BenchBundles;
  extra: ExtraBundle[];
  roundTrips: RoundTrips;
  rounds: number;
}

export interface ColdPathItemResult extends ItemResult {
  /** At RTT 0, a full core: the CPU of the handler's first answer beyond the issuer-free floor's (medians). */
  cpuBeyondFloorAtZeroMs: number | undefined;
}

export async function coldPathItem(setup: ColdPathItemSetup): Promise<ColdPathItemResult> {
  await rm(COMPILE_CACHE_DIRECTORY, { recursive: true, force: true });
  const subjects = coldPathSubjects(setup.bundles, setup.extra);
  const conditions = await withHarness(({ environment, token, deliveredKeySet }) =>
    measureColdPath({
      subjects,
      environment,
      token,
      deliveredKeySet,
      conditions: [{ roundTrips: setup.roundTrips }, { roundTrips: ZERO }],
      rounds: setup.rounds,
    }),
  );
  const rows: Row[] = [];
  let cpuBeyondFloorAtZeroMs: number | undefined;
  for (const condition of conditions) {
    rows.push(...subjectRows(condition, subjects));
    const floor = firstAnswerOf(condition, ISSUER_FREE_FLOOR, "the issuer-free floor");
    const handler = firstAnswerOf(condition, HANDLER, "the handler");
    const verifyingFloor = firstAnswerOf(condition, VERIFYING_FLOOR, "the verifying floor");
    rows.push(...budgetRows(condition, handler, floor, verifyingFloor));
    if (isZero(condition.roundTrips) && "cpu" in handler && "cpu" in floor) {
      cpuBeyondFloorAtZeroMs = handler.cpu.median - floor.cpu.median;
    }
  }
  const [atDefaults, atZero] = conditions;
  const notes =
    atDefaults !== undefined && atZero !== undefined
      ? [movesNote(subjects, atDefaults, atZero, setup.roundTrips)]
      : [];
  notes.push(...failureNotes(conditions));
  return { rows, notes, json: { coldPath: conditions.map(conditionJson) }, cpuBeyondFloorAtZeroMs };
}

/**
 * One line per subject: its first answer, × the issuer-free floor, and its CPU time. At a full core no
 * process should answer other than 200: a subject's row where one did is an error, and says how many.
 */
function subjectRows(condition: ColdPathCondition, subjects: ColdPathSubject[]): Row[] {
  const label = rttLabel(condition.roundTrips);
  const floor = condition.firstMs.get(ISSUER_FREE_FLOOR);
  const measured = subjects.filter(
    ({ name }) => condition.firstMs.has(name) || condition.firstFailed.has(name),
  );
  return measured.map(({ name }) => {
    const summary = condition.firstMs.get(name);
    const failed = condition.firstFailed.get(name);
    const versusFloor =
      name === ISSUER_FREE_FLOOR || summary === undefined || floor === undefined
        ? ""
        : ` ${times(summary.median / floor.median)}`;
    const cpu = condition.firstCpuMs.get(name)?.median ?? Number.NaN;
    const answered = summary && `${spread(summary)}${versusFloor}, CPU ${cpu.toFixed(1)}`;
    const result = `${label}: ${name}`;
    const cell = answeredCell(answered, failed);
    return failed === undefined ? infoRow("2", result, cell) : failedRow("2", result, cell, "—", "ERROR");
  });
}

/**
 * The budgets under a condition: the handler's first answer over the issuer-free floor's (at RTT 0, its
 * CPU part), and at the default round trips over the verifying floor's. Each counted by BENCH_STRICT;
 * where a subject it rests on did not answer 200 in some process, an error that says which.
 */
function budgetRows(
  condition: ColdPathCondition,
  handler: FirstAnswer,
  floor: FirstAnswer,
  verifyingFloor: FirstAnswer,
): Row[] {
  const label = rttLabel(condition.roundTrips);
  const atZero = isZero(condition.roundTrips);
  const { versusIssuerFreeFloor, versusVerifyingFloor } = COLD_PATH_BUDGET;
  const unread = (...subjects: FirstAnswer[]) =>
    subjects.flatMap((subject) => ("unread" in subject ? [subject.unread] : [])).join("; ");
  // The handler's first answer over another's (medians).
  const ratioRow = (result: string, over: FirstAnswer, limit: number): Row => {
    if ("unread" in handler || "unread" in over) {
      return failedRow("2", result, unread(handler, over), `≤ ${limit}×`, "ERROR");
    }
    const ratio = handler.wall.median / over.wall.median;
    return budgetRow("2", result, times(ratio), ratio, limit, `≤ ${limit}×`);
  };
  const rows: Row[] = [];
  if ("cpu" in handler && "cpu" in floor) {
    rows.push(
      infoRow(
        "2",
        `${label}: CPU of the first answer, handler / issuer-free floor`,
        times(handler.cpu.median / floor.cpu.median),
      ),
    );
  }
  rows.push(
    ratioRow(
      `${label}: ${atZero ? "cold-path CPU budget" : "cold path"}, handler / issuer-free floor`,
      floor,
      versusIssuerFreeFloor,
    ),
  );
  if (atZero) return rows;
  rows.push(ratioRow(`${label}: cold path, handler / verifying floor`, verifyingFloor, versusVerifyingFloor));
  return rows;
}

/** Each subject some of whose processes did not answer 200, under each condition: how many, and the first. */
function failureNotes(conditions: ColdPathCondition[]): string[] {
  return conditions.flatMap((condition) =>
    [...condition.firstFailed].map(
      ([name, failed]) => `cold path, ${rttLabel(condition.roundTrips)}: ${name} ${failedSummary(failed)}`,
    ),
  );
}

function isZero({ storeMs, issuerMs }: RoundTrips): boolean {
  return storeMs === 0 && issuerMs === 0;
}

/** How far each subject's first answer moved from RTT 0 to the default round trips, beside the model's. */
function movesNote(
  subjects: ColdPathSubject[],
  atDefaults: ColdPathCondition,
  atZero: ColdPathCondition,
  roundTrips: RoundTrips,
): string {
  const moves = subjects.map((subject) => {
    const at = (condition: ColdPathCondition, pick: (summary: Summary) => number) => {
      const summary = condition.firstMs.get(subject.name);
      return summary === undefined ? Number.NaN : pick(summary);
    };
    const median = at(atDefaults, (s) => s.median) - at(atZero, (s) => s.median);
    const p10 = at(atDefaults, (s) => s.p10) - at(atZero, (s) => s.p10);
    return `${subject.name} ${signed(median)} ms, p10 ${signed(p10)} ms (model +${subject.networkMs(roundTrips)} ms)`;
  });
  return `cold path, how far each moved from RTT 0 to ${rttLabel(roundTrips)}, median and p10: ${moves.join("; ")}`;
}

function signed(value: number): string {
  return `${value >= 0 ? "+" : ""}${value.toFixed(1)}`;
}
