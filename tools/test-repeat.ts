/**
 * `npm run test:repeat -- <runs> [--busy] [-- <command…>]`: runs `npm test` (or the command given after
 * `--`) <runs> times in a row and stops at the first failure, naming the run and printing the end of its
 * output. With --busy a second copy runs beside the counted ones the whole time, as on a busy machine.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  parseRepeatArguments,
  type RepeatArguments,
  type RunResult,
  repeatRuns,
  summaryLine,
} from "./repeat-runs.ts";

/** Of a failed run's output, this many last lines are printed; the whole of it is kept in a file. */
const FAILURE_TAIL_LINES = 150;

/** One run of the command, its stdout and stderr kept in order; Ctrl-C reaches it with the terminal's group. */
function runCommand([file, ...args]: string[]): Promise<RunResult> {
  return new Promise((resolve) => {
    const child = spawn(file ?? "npm", args, { stdio: ["ignore", "pipe", "pipe"] });
    const chunks: Buffer[] = [];
    child.stdout.on("data", (chunk: Buffer) => chunks.push(chunk));
    child.stderr.on("data", (chunk: Buffer) => chunks.push(chunk));
    child.once("error", (error) => resolve({ code: 127, output: `${file}: ${error.message}\n` }));
    child.once("close", (code) => resolve({ code, output: Buffer.concat(chunks).toString("utf8") }));
  });
}

async function main(): Promise<number> {
  let parsed: RepeatArguments;
  try {
    parsed = parseRepeatArguments(process.argv.slice(2));
  } catch (error) {
    console.error((error as Error).message);
    return 2;
  }
  const { runs, busy, command } = parsed;
  const commandText = command.join(" ");
  console.log(
    `test:repeat: ${runs} run(s) of \`${commandText}\`${busy ? ", another running beside them" : ""}`,
  );
  const outcome = await repeatRuns({
    runs,
    busy,
    start: () => runCommand(command),
    report: (line) => console.log(line),
  });
  if (outcome.failure !== undefined) {
    const { label, result } = outcome.failure;
    const logFile = join(mkdtempSync(join(tmpdir(), "plant-store-test-repeat-")), "failed-run.log");
    writeFileSync(logFile, result.output);
    const tail = result.output.trimEnd().split("\n").slice(-FAILURE_TAIL_LINES).join("\n");
    console.log(`\n----- the end of ${label}'s output (all of it: ${logFile}) -----\n${tail}\n-----`);
  }
  console.log(summaryLine(outcome, runs, commandText));
  return outcome.failure === undefined ? 0 : 1;
}

process.exitCode = await main();
