/** Runs the local-run commands as a user does, in child processes, on a data dir of the test's own. */
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

const REPO = fileURLToPath(new URL("../..", import.meta.url));
const TSX = join(REPO, "node_modules", ".bin", "tsx");
const STARTUP_TIMEOUT_MS = 20_000;

export function tempDataDir(): Promise<string> {
  return mkdtemp(join(tmpdir(), "plant-store-local-"));
}

/** The environment of a command: the test's, without a user's settings that would change what it does. */
export function commandEnvironment(overrides: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, ...overrides };
  for (const name of ["AWS_ENDPOINT_URL_DYNAMODB", "PLANTS_TABLE", "PORT"]) {
    if (!(name in overrides)) delete env[name];
  }
  return env;
}

export interface RunningServer {
  /** The base URL; the API is `${url}/plants`. */
  url: string;
  output(): string;
  /** Sends SIGTERM, as Ctrl-C or a process manager would, and resolves with the exit code. */
  stop(): Promise<number | null>;
}

/** `npm start` (tsx local/start.ts) on a free port; resolves once it has printed its URL. */
export async function startServer(env: Record<string, string>): Promise<RunningServer> {
  const child = spawn(TSX, ["local/start.ts"], {
    cwd: REPO,
    env: commandEnvironment({ PORT: "0", ...env }),
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout.on("data", (chunk) => {
    output += chunk;
  });
  child.stderr.on("data", (chunk) => {
    output += chunk;
  });
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => fail(`no URL after ${STARTUP_TIMEOUT_MS} ms`), STARTUP_TIMEOUT_MS);
    const fail = (reason: string) => {
      clearTimeout(timer);
      child.kill("SIGKILL");
      reject(new Error(`npm start failed: ${reason}\n${output}`));
    };
    child.stdout.on("data", () => {
      const match = /API at (http:\/\/127\.0\.0\.1:\d+)\/plants/.exec(output);
      if (match?.[1]) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    });
    void exited.then((code) => fail(`exited with ${code}`));
  });
  return { url, output: () => output, stop: () => stopServer(child, exited) };
}

async function stopServer(child: ChildProcess, exited: Promise<number | null>): Promise<number | null> {
  if (child.exitCode === null) child.kill("SIGTERM");
  return exited;
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
