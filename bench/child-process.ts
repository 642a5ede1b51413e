import { execFile } from "node:child_process";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

export const PROJECT_ROOT = fileURLToPath(new URL("..", import.meta.url));

/**
 * Runs `node` with exactly `environment` (nothing inherited: no NODE_OPTIONS, no loader) and returns
 * the JSON object the child printed as its last line of stdout. Anything before it (the handler's log
 * lines) is ignored. With `procsFile` (bench/cpu-share.ts), the process runs under that CPU quota from
 * its first instruction: a shell writes its own pid there, then becomes node.
 */
export async function runNodeForJson<T>(
  args: string[],
  environment: Record<string, string>,
  profileFolder?: string,
  procsFile?: string,
): Promise<T> {
  const nodeArgs = [...profilingArguments(profileFolder), ...args];
  const [file, fileArgs] =
    procsFile === undefined
      ? [process.execPath, nodeArgs]
      : ["/bin/sh", ["-c", 'echo $$ > "$0" && exec "$@"', procsFile, process.execPath, ...nodeArgs]];
  const stdout = await new Promise<string>((resolve, reject) => {
    execFile(
      file,
      fileArgs,
      { cwd: PROJECT_ROOT, env: environment, maxBuffer: 64 * 1024 * 1024, timeout: 60_000 },
      (error, out) => (error ? reject(error) : resolve(out)),
    );
  });
  const lastLine = stdout.trimEnd().split("\n").pop() ?? "";
  try {
    return JSON.parse(lastLine) as T;
  } catch {
    throw new Error(`node ${args.join(" ")} did not end with a JSON line:\n${stdout.slice(-2000)}`);
  }
}

/** Arguments that run a TypeScript file of this project under tsx. */
export function typeScriptChild(file: string): string[] {
  return ["--import", "tsx", fileURLToPath(new URL(file, import.meta.url))];
}

/**
 * BENCH_CPU_PROF_DIR=<dir>: every child writes a V8 CPU profile there (or in `subfolder` of it, so
 * that the profiles of one kind of process can be read together), sampled every 50 µs.
 */
export function profilingArguments(subfolder?: string): string[] {
  const directory = process.env.BENCH_CPU_PROF_DIR;
  if (!directory) return [];
  const folder = subfolder === undefined ? directory : join(directory, subfolder);
  return ["--cpu-prof", `--cpu-prof-dir=${folder}`, "--cpu-prof-interval=50"];
}
