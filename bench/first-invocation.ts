import { pathToFileURL } from "node:url";
import { apiGatewayEvent } from "../support/events.ts";
import { runNodeForJson } from "./child-process.ts";
import { type Summary, summarize } from "./stats.ts";

/**
 * In a fresh process: import the bundle and answer one valid create (which checks the token, with the
 * key set delivered in JWKS_JSON or fetched from the issuer, and writes to the store), then answer
 * `warmCalls` more on the now-warm instance. Every create has its own id, so each one is a real write.
 * The time ends at the first answer: what the handler does after it (the key set's refresh in the
 * background) falls on the warm calls, as it does on an instance's next requests.
 *
 * An answer that is not a 200 is an outcome, not a crash: a first one is reported as `failed` (its
 * status, the answer's message and when it came) and no warm call is made after it; a warm one as
 * `warmFailed`, the warm calls stopping there. A starved function does answer 503 when its store calls
 * outrun their time limits, and the bench reports it so. A handler that throws still fails the process.
 */
const FIRST_INVOCATION_PROBE = `
import { writeFileSync } from "node:fs";
const [url, eventJson, firstId, warmCalls, procsAfterImport] = process.argv.slice(1);
const template = JSON.parse(eventJson);
let nextId = BigInt(firstId);
const nextEvent = () => ({ ...template, body: '{"id":' + nextId++ + ',"name":"Fern","tag":"bench"}' });
const failure = (answer, afterMs) => {
  let message = String(answer.body ?? "");
  try {
    const parsed = JSON.parse(message);
    if (typeof parsed?.message === "string") message = parsed.message;
  } catch {}
  return { status: answer.statusCode, message: message.slice(0, 300), afterMs };
};
const report = (result) => {
  process.stdout.write(JSON.stringify(result) + "\\n");
  process.exit(0); // a safeguard: nothing else is left to run
};
const firstEvent = nextEvent();
const cpuAtStart = process.cpuUsage();
const startedAt = performance.now();
const { handler } = await import(url);
const importMs = performance.now() - startedAt;
if (procsAfterImport) writeFileSync(procsAfterImport, String(process.pid));
// Lambda's runtime turns the event loop between init and the first invocation (it schedules each with
// setImmediate and receives it from the Runtime API): I/O begun at init moves on then, as here.
await new Promise((resolve) => setImmediate(resolve));
const firstAnswer = await handler(firstEvent);
const firstMs = performance.now() - startedAt;
const firstCpu = process.cpuUsage(cpuAtStart);
const firstCpuMs = (firstCpu.user + firstCpu.system) / 1000;
if (firstAnswer.statusCode !== 200) report({ importMs, failed: failure(firstAnswer, firstMs) });
const warmMs = [];
for (let call = 0; call < Number(warmCalls); call++) {
  const event = nextEvent();
  const callStartedAt = performance.now();
  const answer = await handler(event);
  const callMs = performance.now() - callStartedAt;
  if (answer.statusCode !== 200) {
    report({ importMs, firstMs, firstCpuMs, warmMs, warmFailed: failure(answer, callMs) });
  }
  warmMs.push(callMs);
}
report({ importMs, firstMs, firstCpuMs, warmMs });
`;

export interface FirstInvocationResult {
  /** Import plus the first create, in a fresh process. */
  first: Summary;
  /** The import alone, from the same processes. */
  importOnly: Summary;
  /** Wall time of each later create on a warm instance: the billed duration's estimate. */
  warm: Summary;
}

export interface FirstInvocationSetup {
  bundlePath: string;
  /** The bundle's configuration, pointing at a running JWKS server and a store with the table. */
  environment: Record<string, string>;
  token: string;
  runs: number;
  warmCallsPerRun: number;
}

/** An answer that was not a 200: its status, its message (the body's `message`, else the body). */
export interface FailedAnswer {
  status: number;
  message: string;
  /** When it came: from the start of `import` for a first answer, from the call's start for a warm one. */
  afterMs: number;
}

export interface FreshProcessTimes {
  /** From the start of `import` to the end of the first answer. */
  firstMs: number;
  /** CPU time (user + system, all threads) over the same span: what a loaded machine does not inflate. */
  firstCpuMs: number;
  importMs: number;
  /** The warm creates that answered 200, in order, up to the first that did not. */
  warmMs: number[];
  /** The warm create that did not answer 200, if one did not: the last one made. */
  warmFailed?: FailedAnswer;
}

/** A process whose first answer was not a 200: no warm call was made after it. */
export interface FreshProcessFailure {
  importMs: number;
  failed: FailedAnswer;
}

export type FreshProcessOutcome = FreshProcessTimes | FreshProcessFailure;

/** "503: the plant store did not confirm the write: …": a failed answer in one line. */
export function describeFailure({ status, message }: FailedAnswer): string {
  return `${status}: ${message}`;
}

/** A CPU quota for a fresh process (bench/cpu-share.ts), from its start or only once its import is done. */
export interface FreshProcessShare {
  procsFile: string;
  /** Init (the import) at a whole core, the invocations at the share: if Lambda boosts init, this. */
  initAtFullCore: boolean;
}

/**
 * One fresh process: import `bundlePath`, answer one create of `firstId`, then `warmCalls` more; a
 * first answer that is not a 200 comes back as a FreshProcessFailure. With BENCH_CPU_PROF_DIR set, its
 * profile goes to `profileFolder` there.
 */
export function timeFreshProcess(
  bundlePath: string,
  environment: Record<string, string>,
  eventJson: string,
  firstId: number,
  warmCalls: number,
  profileFolder?: string,
  share?: FreshProcessShare,
): Promise<FreshProcessOutcome> {
  const args = [
    "--input-type=module",
    "--eval",
    FIRST_INVOCATION_PROBE,
    pathToFileURL(bundlePath).href,
    eventJson,
    String(firstId),
    String(warmCalls),
    share?.initAtFullCore ? share.procsFile : "",
  ];
  const fromStart = share !== undefined && !share.initAtFullCore ? share.procsFile : undefined;
  return runNodeForJson<FreshProcessOutcome>(args, environment, profileFolder, fromStart);
}

/**
 * Each bundle in turn (the order rotating each run, so load drift falls on all alike), `setup.runs`
 * fresh processes each; results by bundle, in the order given. The first is `setup.bundlePath`.
 */
export async function measureFirstInvocations(
  setup: FirstInvocationSetup,
  others: string[] = [],
): Promise<FirstInvocationResult[]> {
  const bundles = [setup.bundlePath, ...others];
  const event = JSON.stringify(apiGatewayEvent("2.0", { token: setup.token }));
  let nextId = Date.now() * 1000;
  const samples = bundles.map(() => ({
    first: [] as number[],
    importOnly: [] as number[],
    warm: [] as number[],
  }));
  for (let run = 0; run < setup.runs; run++) {
    for (let turn = 0; turn < bundles.length; turn++) {
      const which = (run + turn) % bundles.length;
      const bundle = bundles[which] as string;
      const result = await timeFreshProcess(bundle, setup.environment, event, nextId, setup.warmCallsPerRun);
      nextId += setup.warmCallsPerRun + 1;
      // On loopback at a whole core nothing starves: an answer that is not a 200 is an error here.
      if ("failed" in result) {
        throw new Error(`${bundle}: the first create answered ${describeFailure(result.failed)}`);
      }
      if (result.warmFailed !== undefined) {
        throw new Error(`${bundle}: a warm create answered ${describeFailure(result.warmFailed)}`);
      }
      samples[which]?.first.push(result.firstMs);
      samples[which]?.importOnly.push(result.importMs);
      samples[which]?.warm.push(...result.warmMs);
    }
  }
  return samples.map(({ first, importOnly, warm }) => ({
    first: summarize(first),
    importOnly: summarize(importOnly),
    warm: summarize(warm),
  }));
}
