import { execFile } from "node:child_process";
import { fileURLToPath, pathToFileURL } from "node:url";

const PROJECT_ROOT = fileURLToPath(new URL("..", import.meta.url));

/**
 * In a fresh process: import the bundle, answer one create, then `warmCalls` more, one after another, as
 * an instance under steady traffic does. Every create has its own id, so each is a real write. The first
 * answer's time ends at its answer: what the handler does after it (the key set's refresh) falls on the
 * warm calls, as it does on an instance's next requests. The first answer that is not a 200 ends the
 * process and is reported: a starved function does answer 503 when its store calls outrun their limits.
 */
const PROBE = `
const [url, eventJson, firstId, warmCalls] = process.argv.slice(1);
const template = JSON.parse(eventJson);
let nextId = BigInt(firstId);
const nextEvent = () => ({ ...template, body: '{"id":' + nextId++ + ',"name":"Fern","tag":"bench"}' });
const report = (result, answer) => {
  if (answer !== undefined) {
    let message = String(answer.body ?? "");
    try { message = String(JSON.parse(message).message ?? message); } catch {}
    result.failed = { status: answer.statusCode, message: message.slice(0, 200) };
  }
  process.stdout.write(JSON.stringify(result) + "\\n");
  process.exit(0);
};
const firstEvent = nextEvent();
const startedAt = performance.now();
const { handler } = await import(url);
const importMs = performance.now() - startedAt;
// Lambda's runtime turns the event loop between init and the first invocation: I/O begun at init moves on.
await new Promise((resolve) => setImmediate(resolve));
const first = await handler(firstEvent);
const firstMs = performance.now() - startedAt;
if (first.statusCode !== 200) report({ importMs, warmMs: [] }, first);
const warmMs = [];
const cpuAtStart = process.cpuUsage();
for (let call = 0; call < Number(warmCalls); call++) {
  const callStartedAt = performance.now();
  const answer = await handler(nextEvent());
  if (answer.statusCode !== 200) report({ importMs, firstMs, warmMs }, answer);
  warmMs.push(performance.now() - callStartedAt);
}
const cpu = process.cpuUsage(cpuAtStart);
const warmCpuMs = warmMs.length === 0 ? undefined : (cpu.user + cpu.system) / 1000 / warmMs.length;
report({ importMs, firstMs, warmMs, warmCpuMs });
`;

export interface ProcessOutcome {
  /** The `import` of the bundle: module loading, compiling, and its init (top-level code). */
  importMs: number;
  /** From the start of `import` to the first answer, when it was a 200. */
  firstMs?: number;
  /** Each warm create that answered 200, in order. */
  warmMs: number[];
  /** CPU time (user + system, all threads) per warm create, when all answered 200. */
  warmCpuMs?: number;
  /** The answer that was not a 200 and ended the process (status 0: the process failed). */
  failed?: { status: number; message: string };
}

/**
 * One fresh process of `bundlePath` with exactly `environment` (nothing inherited: no NODE_OPTIONS, no
 * loader). With `procsFile` (bench/cpu-share.ts) it runs under that CPU quota from its first instruction:
 * a shell writes its own pid there, then becomes node. A process that crashes is a failed outcome.
 */
export async function runFreshProcess(
  bundlePath: string,
  environment: Record<string, string>,
  eventJson: string,
  firstId: number,
  warmCalls: number,
  procsFile?: string,
): Promise<ProcessOutcome> {
  const args = ["--input-type=module", "--eval", PROBE, pathToFileURL(bundlePath).href, eventJson];
  args.push(String(firstId), String(warmCalls));
  const [file, fileArgs] =
    procsFile === undefined
      ? [process.execPath, args]
      : ["/bin/sh", ["-c", 'echo $$ > "$0" && exec "$@"', procsFile, process.execPath, ...args]];
  return new Promise((resolve) => {
    const options = { cwd: PROJECT_ROOT, env: environment, maxBuffer: 64 * 1024 * 1024, timeout: 120_000 };
    execFile(file, fileArgs, options, (error, stdout, stderr) => {
      const lastLine = stdout.trimEnd().split("\n").pop() ?? "";
      try {
        if (error) throw error;
        resolve(JSON.parse(lastLine) as ProcessOutcome);
      } catch {
        const why = (stderr.trim().split("\n").pop() ?? "") || String(error?.message ?? lastLine);
        resolve({ importMs: Number.NaN, warmMs: [], failed: { status: 0, message: why.slice(0, 200) } });
      }
    });
  });
}
