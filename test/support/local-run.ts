/**
 * Runs the local-run commands as a user does, in child processes, on data dirs of the test's own.
 * Everything made here is undone after the test file, also when a test fails: the data dirs (they
 * hold private signing keys) are removed, and every process left running, with its children, is killed.
 */
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll } from "vitest";

export const REPO = fileURLToPath(new URL("../..", import.meta.url));
const STARTUP_TIMEOUT_MS = 30_000;
/** What the banner of `npm start` says once it serves. */
const BANNER = /API at (http:\/\/127\.0\.0\.1:\d+)\/plants/;

const dataDirs = new Set<string>();
const processGroups = new Set<number>();

// Registered by whichever test file imports this: vitest evaluates it, per file, while collecting.
afterAll(cleanUp);

/**
 * The handler's store timeouts for a local run whose store answers faults on purpose: long enough that
 * a fault answered late on a busy machine is still that fault, not a timeout (whose 503 says another thing).
 */
export const GENEROUS_STORE_TIMEOUTS = { STORE_ATTEMPT_TIMEOUT_MS: "20000", STORE_DEADLINE_MS: "25000" };

export async function tempDataDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "plant-store-local-"));
  dataDirs.add(dir);
  return dir;
}

/** Kills what is left of every command started here, then removes every data dir made here. */
export async function cleanUp(): Promise<void> {
  for (const group of processGroups) killGroup(group, "SIGKILL");
  processGroups.clear();
  await Promise.all([...dataDirs].map((dir) => rm(dir, { recursive: true, force: true })));
  dataDirs.clear();
}

/** The environment of a command: the test's, without a user's settings that would change what it does. */
export function commandEnvironment(overrides: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, ...overrides };
  for (const name of ["AWS_ENDPOINT_URL_DYNAMODB", "PLANTS_TABLE", "PORT", "PLANTS_DATA_DIR"]) {
    if (!(name in overrides)) delete env[name];
  }
  return env;
}

export interface Command {
  child: ChildProcess;
  /** stdout and stderr so far, interleaved as they came. */
  output(): string;
  exited: Promise<number | null>;
  /** Whether any process the command started (npm, tsx, node, esbuild) is still running. */
  anyProcessLeft(): boolean;
}

/**
 * Starts a command in a process group of its own, so that whatever it starts can be found and
 * killed at the end even if the command itself has gone (the orphan a lost signal would leave).
 */
export function startCommand(file: string, args: string[], env: Record<string, string>, cwd = REPO): Command {
  const child = spawn(file, args, {
    cwd,
    env: commandEnvironment(env),
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  const group = child.pid;
  if (group === undefined) throw new Error(`could not start ${file}`);
  processGroups.add(group);
  let output = "";
  child.stdout?.on("data", (chunk) => {
    output += chunk;
  });
  child.stderr?.on("data", (chunk) => {
    output += chunk;
  });
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  return { child, output: () => output, exited, anyProcessLeft: () => killGroup(group, 0) };
}

/** Sends `signal` to every process of the group; true if there was any. */
function killGroup(group: number, signal: NodeJS.Signals | 0): boolean {
  try {
    process.kill(-group, signal);
    return true;
  } catch {
    return false;
  }
}

/**
 * `local/start.ts` as package.json's start script runs it: node with tsx's loader, so that a signal
 * reaches the server itself (the tsx command would stand between, relaying it).
 */
export function startLocalRun(env: Record<string, string>, nodeArgs: string[] = [], cwd = REPO): Command {
  return startCommand(process.execPath, ["--import", "tsx", ...nodeArgs, "local/start.ts"], env, cwd);
}

export interface RunningServer extends Command {
  /** The base URL; the API is `${url}/plants`. */
  url: string;
  /** Sends SIGTERM, as Ctrl-C or a process manager would, and resolves with the exit code. */
  stop(): Promise<number | null>;
}

/**
 * `npm start` itself (`viaNpm`), or the command its script runs, on a free port unless PORT is given; in
 * the repository, or in `cwd` (a copy of it).
 */
export async function startServer(
  env: Record<string, string>,
  options: { viaNpm?: boolean; nodeArgs?: string[]; cwd?: string } = {},
): Promise<RunningServer> {
  const command = options.viaNpm
    ? startCommand("npm", ["start"], { PORT: "0", ...env }, options.cwd)
    : startLocalRun({ PORT: "0", ...env }, options.nodeArgs, options.cwd);
  const url = await waitForBanner(command);
  return {
    ...command,
    url,
    stop: async () => {
      if (command.child.exitCode === null) command.child.kill("SIGTERM");
      return command.exited;
    },
  };
}

/** Resolves with the URL once the command has printed its banner; rejects if it exits first. */
export function waitForBanner(command: Command): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => fail(`no URL after ${STARTUP_TIMEOUT_MS} ms`), STARTUP_TIMEOUT_MS);
    const fail = (reason: string) => {
      clearTimeout(timer);
      command.child.kill("SIGKILL");
      reject(new Error(`npm start failed: ${reason}\n${command.output()}`));
    };
    const check = () => {
      const match = BANNER.exec(command.output());
      if (match?.[1]) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    };
    command.child.stdout?.on("data", check);
    check();
    void command.exited.then((code) => fail(`exited with ${code}`));
  });
}

/** Runs a command of package.json the way its README says: `npm run --silent <script> -- <args>`. */
export async function npmRun(
  script: string,
  args: string[],
  env: Record<string, string>,
): Promise<{ stdout: string; stderr: string }> {
  return promisify(execFile)("npm", ["run", "--silent", script, "--", ...args], {
    cwd: REPO,
    env: commandEnvironment(env),
  });
}
