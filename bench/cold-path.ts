/**
 * The cold path as AWS sees it: fresh processes timed from `import` to their first answer, then their
 * warm creates, the store and the key set behind TLS with an injected round-trip time each
 * (bench/network-model.ts), at a full core or under a memory size's CPU share (bench/cpu-share.ts). Every
 * condition and subject is interleaved, round by round, the order rotated, so that drift in the
 * machine's load falls on all alike. Every process gets the issuer's key set in JWKS_JSON, as the stack
 * delivers it; the issuer stays reachable for the handler's refresh after the answer. The CA is trusted
 * through NODE_EXTRA_CA_CERTS and AWS_LAMBDA_FUNCTION_NAME is set, so a handler does its init at import.
 */
import { createLoopbackCertificates } from "../support/certificates.ts";
import { apiGatewayEvent } from "../support/events.ts";
import { makeCpuShare, removeCpuShares } from "./cpu-share.ts";
import { type ProcessOutcome, runFreshProcess } from "./fresh-process.ts";
import { type RemoteEndpoint, startRemoteEndpoint } from "./network-model.ts";
import { type Summary, summarize } from "./stats.ts";

export interface RoundTrips {
  storeMs: number;
  issuerMs: number;
}

/** What a set of fresh processes runs under. */
export interface Condition {
  /** The memory size whose CPU share its processes get; none: a full core. */
  memoryMb?: number;
  /** Its subjects, by name. */
  subjectNames: string[];
  /** Rounds of one process per subject. */
  rounds: number;
}

/** One subject's processes under one condition: the times of those that answered, the count of those not. */
export interface Measured {
  processes: number;
  /** From `import` to the first answer, of the processes whose first answer was a 200. */
  first?: Summary;
  importMs?: Summary;
  /** Every warm create that answered 200, of every process. */
  warm?: Summary;
  /** CPU per warm create, one sample per process whose warm creates all answered 200. */
  warmCpuMs?: Summary;
  /** Processes that ended on an answer other than a 200 (first or warm), and the first such answer. */
  failed: number;
  firstFailure?: { status: number; message: string };
}

export interface ConditionResult extends Condition {
  /** Why it was not measured: no CPU share could be made here. */
  notMeasured?: string;
  bySubject: Map<string, Measured>;
}

export interface ColdPathSetup {
  /** Each bundle, by name, with variables of its own added to its processes' environment, if any. */
  subjects: { name: string; bundlePath: string; environment?: Record<string, string> }[];
  conditions: Condition[];
  roundTrips: RoundTrips;
  /** Creates each process answers after its first. */
  warmCalls: number;
  /** The harness's: plain-HTTP dynalite (with the table) and key-set server, their settings. */
  environment: Record<string, string>;
  token: string;
  /** The issuer's public key set, compact JSON. */
  deliveredKeySet: string;
}

export async function measureColdPath(setup: ColdPathSetup): Promise<ConditionResult[]> {
  const certificates = await createLoopbackCertificates();
  const opened: RemoteEndpoint[] = [];
  const behindTls = async (url: URL, roundTripMs: number) => {
    const endpoint = await startRemoteEndpoint({
      ...certificates,
      upstreamPort: Number(url.port),
      roundTripMs,
    });
    opened.push(endpoint);
    return endpoint.origin;
  };
  try {
    const jwksUrl = new URL(required(setup.environment, "JWKS_URL"));
    const storeUrl = new URL(required(setup.environment, "AWS_ENDPOINT_URL_DYNAMODB"));
    const environment = {
      ...setup.environment,
      AWS_ENDPOINT_URL_DYNAMODB: await behindTls(storeUrl, setup.roundTrips.storeMs),
      JWKS_URL: `${await behindTls(jwksUrl, setup.roundTrips.issuerMs)}${jwksUrl.pathname}`,
      JWKS_JSON: setup.deliveredKeySet,
      NODE_EXTRA_CA_CERTS: certificates.caPath,
      AWS_LAMBDA_FUNCTION_NAME: "plant-store-bench",
    };
    return await sampleRounds(setup, environment);
  } finally {
    const left = removeCpuShares();
    if (left.length > 0) console.error(`bench: cgroups not removed: ${left.join(", ")}`);
    await Promise.all(opened.map((endpoint) => endpoint.close()));
    await certificates.remove();
  }
}

async function sampleRounds(setup: ColdPathSetup, environment: Record<string, string>) {
  const event = JSON.stringify(apiGatewayEvent("2.0", { token: setup.token }));
  const runs = setup.conditions.map((condition) => {
    const share: { procsFile?: string; notMeasured?: string } =
      condition.memoryMb === undefined ? {} : makeCpuShare(condition.memoryMb);
    const outcomes = new Map(condition.subjectNames.map((name) => [name, [] as ProcessOutcome[]]));
    return { condition, share, outcomes };
  });
  const subjectOf = new Map(setup.subjects.map((subject) => [subject.name, subject]));
  const rounds = Math.max(...setup.conditions.map((condition) => condition.rounds));
  const startedAt = performance.now();
  let nextId = Date.now() * 1000;
  for (let round = 0; round < rounds; round++) {
    process.stderr.write(`bench: round ${round + 1} of ${rounds}, ${elapsed(startedAt)}\n`);
    for (const { condition, share, outcomes } of rotate(runs, round)) {
      if (round >= condition.rounds || share.notMeasured !== undefined) continue;
      for (const name of rotate(condition.subjectNames, round)) {
        const subject = subjectOf.get(name);
        if (subject === undefined) throw new Error(`no bundle for the subject "${name}"`);
        const outcome = await runFreshProcess(
          subject.bundlePath,
          { ...environment, ...subject.environment },
          event,
          nextId,
          setup.warmCalls,
          share.procsFile,
        );
        nextId += setup.warmCalls + 1;
        outcomes.get(name)?.push(outcome);
      }
    }
  }
  return runs.map(({ condition, share, outcomes }) => ({
    ...condition,
    ...(share.notMeasured === undefined ? {} : { notMeasured: share.notMeasured }),
    bySubject: new Map([...outcomes].map(([name, list]) => [name, measured(list)])),
  }));
}

/** A subject's outcomes, summed up; a summary only where there are samples. */
function measured(outcomes: ProcessOutcome[]): Measured {
  const summary = (values: (number | undefined)[]) => {
    const present = values.filter((value): value is number => value !== undefined);
    return present.length === 0 ? undefined : summarize(present);
  };
  const failures = outcomes.flatMap((outcome) => (outcome.failed === undefined ? [] : [outcome.failed]));
  return {
    processes: outcomes.length,
    first: summary(outcomes.map((outcome) => outcome.firstMs)),
    importMs: summary(
      outcomes.map((outcome) => (outcome.failed?.status === 0 ? undefined : outcome.importMs)),
    ),
    warm: summary(outcomes.flatMap((outcome) => outcome.warmMs)),
    warmCpuMs: summary(outcomes.map((outcome) => outcome.warmCpuMs)),
    failed: failures.length,
    ...(failures[0] === undefined ? {} : { firstFailure: failures[0] }),
  };
}

/** The items starting at `by` (mod length): each round starts with another, so drift falls on all. */
function rotate<T>(items: readonly T[], by: number): T[] {
  const start = by % Math.max(1, items.length);
  return [...items.slice(start), ...items.slice(0, start)];
}

function elapsed(since: number): string {
  const seconds = Math.round((performance.now() - since) / 1000);
  return `${Math.floor(seconds / 60)} min ${seconds % 60} s`;
}

function required(environment: Record<string, string>, name: string): string {
  const value = environment[name];
  if (value === undefined) throw new Error(`${name} is not in the harness's environment`);
  return value;
}
