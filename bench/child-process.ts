import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { BUNDLE_OPTIONS } from "../tools/bundle-options.ts";

export const PROJECT_ROOT = fileURLToPath(new URL("..", import.meta.url));

/**
 * Runs `node` with exactly `environment` (nothing inherited: no NODE_OPTIONS, no loader) and returns
 * the JSON object the child printed as its last line of stdout. Anything before it (the handler's log
 * lines) is ignored.
 */
export async function runNodeForJson<T>(args: string[], environment: Record<string, string>): Promise<T> {
  const stdout = await new Promise<string>((resolve, reject) => {
    execFile(
      process.execPath,
      [...profilingArguments(), ...args],
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

/** Arguments that run a TypeScript file of this project under tsx, resolving packages as the bundle does. */
export function typeScriptChild(file: string): string[] {
  // The bundle takes aws-jwt-verify's WebCrypto build ("browser"); so must in-process runs.
  const conditions = BUNDLE_OPTIONS.conditions.map((condition) => `--conditions=${condition}`);
  return [...conditions, "--import", "tsx", fileURLToPath(new URL(file, import.meta.url))];
}

/** BENCH_CPU_PROF_DIR=<dir>: every child writes a V8 CPU profile there, sampled every 50 µs. */
export function profilingArguments(): string[] {
  const directory = process.env.BENCH_CPU_PROF_DIR;
  return directory ? ["--cpu-prof", `--cpu-prof-dir=${directory}`, "--cpu-prof-interval=50"] : [];
}
