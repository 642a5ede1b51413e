/**
 * `npm run bench -- --node <path>` or `BENCH_NODE=<path> npm run bench`: the Node binary to measure
 * with. The bench starts again on it, its folder first on PATH, so that this process, the servers it
 * starts and every child it spawns (which use process.execPath) all run on that Node.
 */
import { spawn } from "node:child_process";
import { realpathSync } from "node:fs";
import { delimiter, dirname } from "node:path";
import { fileURLToPath } from "node:url";

const PROJECT_ROOT = fileURLToPath(new URL("..", import.meta.url));

/** The binary asked for, resolved; undefined when none was, or when it is the one running. */
export function requestedOtherNode(args: string[], environment: NodeJS.ProcessEnv): string | undefined {
  const flagAt = args.findIndex((arg) => arg === "--node" || arg.startsWith("--node="));
  const flag = flagAt < 0 ? undefined : (args[flagAt] ?? "");
  const asked = flag?.startsWith("--node=")
    ? flag.slice("--node=".length)
    : flag
      ? args[flagAt + 1]
      : undefined;
  const path = asked ?? environment.BENCH_NODE;
  if (path === undefined || path === "") return undefined;
  let resolved: string;
  try {
    resolved = realpathSync(path);
  } catch {
    throw new Error(`the Node to measure with, '${path}', does not exist`);
  }
  return resolved === realpathSync(process.execPath) ? undefined : resolved;
}

/** Runs `script` (a file of bench/) on `node` under tsx and resolves with its exit code. */
export function runOnNode(node: string, script: string, args: string[]): Promise<number> {
  const file = fileURLToPath(new URL(script, import.meta.url));
  const child = spawn(node, ["--import", "tsx", file, ...withoutNodeFlag(args)], {
    cwd: PROJECT_ROOT,
    stdio: "inherit",
    env: {
      ...process.env,
      BENCH_NODE: node,
      PATH: `${dirname(node)}${delimiter}${process.env.PATH ?? ""}`,
    },
  });
  return new Promise((resolve, reject) => {
    child.once("error", reject);
    child.once("exit", (code, signal) => resolve(code ?? (signal ? 1 : 0)));
  });
}

function withoutNodeFlag(args: string[]): string[] {
  const kept: string[] = [];
  for (let index = 0; index < args.length; index++) {
    const arg = args[index] ?? "";
    if (arg === "--node") index++;
    else if (!arg.startsWith("--node=")) kept.push(arg);
  }
  return kept;
}
