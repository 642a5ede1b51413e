/**
 * Runs a command again and again until one run fails, optionally with a second copy of it running beside
 * it the whole time (a busy machine): how a flaky test is caught, and how its fix is proven.
 */

export interface RunResult {
  /** The exit code; `null` when a signal ended the run. */
  code: number | null;
  output: string;
}

/** Starts one run of the command; `label` is "run 3" or "beside 2". */
export type StartRun = (label: string) => Promise<RunResult>;

export interface RepeatOptions {
  runs: number;
  /** Also keeps one more run going beside the counted ones, from the first to the last. */
  busy: boolean;
  start: StartRun;
  /** Prints one line of progress. */
  report: (line: string) => void;
  /** Milliseconds since some fixed moment; `performance.now` fits. */
  now?: () => number;
}

export interface RepeatOutcome {
  /** Counted runs that passed before the first failure (all of them when none failed). */
  passed: number;
  /** Runs beside them, each finished and passed. */
  besidePassed: number;
  /** The first run that failed, counted or beside, with its output. */
  failure: { label: string; result: RunResult } | undefined;
}

export async function repeatRuns(options: RepeatOptions): Promise<RepeatOutcome> {
  const { runs, start, report } = options;
  const now = options.now ?? (() => performance.now());
  let failure: RepeatOutcome["failure"];
  let counting = true;
  let besidePassed = 0;

  // Beside runs go on until the counted runs are over; the one running then is waited for and judged too.
  const beside = options.busy
    ? (async () => {
        for (let run = 1; counting && failure === undefined; run++) {
          const label = `beside ${run}`;
          const result = await start(label);
          if (result.code !== 0) {
            failure ??= { label, result };
            return;
          }
          besidePassed++;
          report(`${label}: passed`);
        }
      })()
    : Promise.resolve();

  let passed = 0;
  for (let run = 1; run <= runs && failure === undefined; run++) {
    const label = `run ${run} of ${runs}`;
    const startedAt = now();
    const result = await start(label);
    const seconds = ((now() - startedAt) / 1000).toFixed(1);
    if (result.code !== 0) {
      failure ??= { label, result };
      report(`${label}: FAILED (exit ${result.code ?? "by signal"}) after ${seconds} s`);
      break;
    }
    passed++;
    report(`${label}: passed in ${seconds} s`);
  }
  counting = false;
  await beside;
  return { passed, besidePassed, failure };
}

/** The line that ends the output: what passed, or which run failed. */
export function summaryLine(outcome: RepeatOutcome, runs: number, command: string): string {
  const besideNote = (count: number) =>
    count === 0 ? "" : ` (with ${count} more run${count === 1 ? "" : "s"} passed beside them)`;
  if (outcome.failure === undefined) {
    return `test:repeat: ${outcome.passed} of ${runs} runs of \`${command}\` passed${besideNote(outcome.besidePassed)}`;
  }
  const { label, result } = outcome.failure;
  return (
    `test:repeat: FAILED: ${label} of \`${command}\` exited ${result.code ?? "by signal"}, ` +
    `after ${outcome.passed} of ${runs} passed${besideNote(outcome.besidePassed)}`
  );
}

export const REPEAT_USAGE =
  "usage: npm run test:repeat -- <runs> [--busy] [-- <command and arguments; default: npm test>]";

export interface RepeatArguments {
  runs: number;
  busy: boolean;
  command: string[];
}

/** The arguments after `npm run test:repeat --`. */
export function parseRepeatArguments(args: string[]): RepeatArguments {
  const separator = args.indexOf("--");
  const own = separator === -1 ? args : args.slice(0, separator);
  const command = separator === -1 ? ["npm", "test"] : args.slice(separator + 1);
  const busy = own.includes("--busy");
  const rest = own.filter((arg) => arg !== "--busy");
  const [count, ...unknown] = rest;
  if (unknown.length > 0 || count === undefined || !/^[1-9]\d{0,4}$/.test(count) || command.length === 0) {
    throw new Error(REPEAT_USAGE);
  }
  return { runs: Number(count), busy, command };
}
