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
 */
const FIRST_INVOCATION_PROBE = `
import { writeFileSync } from "node:fs";
const [url, eventJson, firstId, warmCalls, procsAfterImport] = process.argv.slice(1);
const template = JSON.parse(eventJson);
let nextId = BigInt(firstId);
const nextEvent = () => ({ ...template, body: '{"id":' + nextId++ + ',"name":"Fern","tag":"bench"}' });
const answered = (answer) => {
  if (answer.statusCode !== 200) throw new Error("create answered " + answer.statusCode + ": " + answer.body);
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
answered(await handler(firstEvent));
const firstMs = performance.now() - startedAt;
const firstCpu = process.cpuUsage(cpuAtStart);
const firstCpuMs = (firstCpu.user + firstCpu.system) / 1000;
const warmMs = [];
for (let call = 0; call < Number(warmCalls); call++) {
  const event = nextEvent();
  const callStartedAt = performance.now();
  answered(await handler(event));
  warmMs.push(performance.now() - callStartedAt);
}
process.stdout.write(JSON.stringify({ importMs, firstMs, firstCpuMs, warmMs }) + "\\n");
process.exit(0); // a safeguard: nothing else is left to run
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

export interface FreshProcessTimes {
  /** From the start of `import` to the end of the first answer. */
  firstMs: number;
  /** CPU time (user + system, all threads) over the same span: what a loaded machine does not inflate. */
  firstCpuMs: number;
  importMs: number;
  warmMs: number[];
}

/** A CPU quota for a fresh process (bench/cpu-share.ts), from its start or only once its import is done. */
export interface FreshProcessShare {
  procsFile: string;
  /** Init (the import) at a whole core, the invocations at the share: if Lambda boosts init, this. */
  initAtFullCore: boolean;
}

/**
 * One fresh process: import `bundlePath`, answer one create of `firstId`, then `warmCalls` more. With
 * BENCH_CPU_PROF_DIR set, its profile goes to `profileFolder` there.
 */
export function timeFreshProcess(
  bundlePath: string,
  environment: Record<string, string>,
  eventJson: string,
  firstId: number,
  warmCalls: number,
  profileFolder?: string,
  share?: FreshProcessShare,
): Promise<FreshProcessTimes> {
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
  return runNodeForJson<FreshProcessTimes>(args, environment, profileFolder, fromStart);
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
      const result = await timeFreshProcess(
        bundles[which] as string,
        setup.environment,
        event,
        nextId,
        setup.warmCallsPerRun,
      );
      nextId += setup.warmCallsPerRun + 1;
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
