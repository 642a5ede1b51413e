/**
 * `npm run bench -- --node <path>` or `BENCH_NODE=<path> npm run bench`: the Node binary to measure
 * with. The bench starts again on it, its folder first on PATH, so that this process, the servers it
 * starts and every child it spawns (which use process.execPath) all run on that Node.
 */
import { spawn } from "node:child_process";
import { once } from "node:events";
import { existsSync, realpathSync } from "node:fs";
import { delimiter, dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";

const PROJECT_ROOT = fileURLToPath(new URL("..", import.meta.url));

/** The binary asked for, resolved; undefined when none was, or when it is the one running. */
export function requestedOtherNode(args: string[], environment: NodeJS.ProcessEnv): string | undefined {
  const path =
    parseArgs({ args, options: { node: { type: "string" } } }).values.node ?? environment.BENCH_NODE;
  if (path === undefined || path === "") return undefined;
  if (!existsSync(path)) throw new Error(`the Node to measure with, '${path}', does not exist`);
  const resolved = realpathSync(path);
  return resolved === realpathSync(process.execPath) ? undefined : resolved;
}

/**
 * Runs `script` (a file of bench/) on `node` under tsx and resolves with its exit code. It is given
 * BENCH_NODE, not the arguments: on that Node, requestedOtherNode() finds the one running.
 */
export async function runOnNode(node: string, script: string): Promise<number> {
  const file = fileURLToPath(new URL(script, import.meta.url));
  const child = spawn(node, ["--import", "tsx", file], {
    cwd: PROJECT_ROOT,
    stdio: "inherit",
    env: {
      ...process.env,
      BENCH_NODE: node,
      PATH: `${dirname(node)}${delimiter}${process.env.PATH ?? ""}`,
    },
  });
  // A child killed by a signal has no exit code.
  const [code] = (await once(child, "exit")) as [number | null];
  return code ?? 1;
}
