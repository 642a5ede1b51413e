/**
 * The cold path as AWS sees it: a fresh process timed from `import` to its first answer, the store and
 * the key set behind TLS and an injected round-trip time each (bench/network-model.ts), beside the
 * floors (bench/floor-handlers.ts), all interleaved in one run. Subjects that ship with the issuer's
 * key set delivered get it in JWKS_JSON; the issuer stays reachable for their refresh after the
 * answer. In the measured processes the CA is trusted through NODE_EXTRA_CA_CERTS and
 * AWS_LAMBDA_FUNCTION_NAME is set, so the handler does its init work at import, as in Lambda.
 */

import { createLoopbackCertificates, type LoopbackCertificates } from "../support/certificates.ts";
import { apiGatewayEvent } from "../support/events.ts";
import {
  describeFailure,
  type FailedAnswer,
  type FreshProcessOutcome,
  type FreshProcessShare,
  timeFreshProcess,
} from "./first-invocation.ts";
import { type RemoteEndpoint, startRemoteEndpoint } from "./network-model.ts";
import { type Summary, summarize } from "./stats.ts";

export interface RoundTrips {
  storeMs: number;
  issuerMs: number;
}

/** One bundle measured on the cold path, with the network time the model predicts for its first answer. */
export interface ColdPathSubject {
  name: string;
  bundlePath: string;
  networkMs: (roundTrips: RoundTrips) => number;
  /** Whether its process gets the issuer's key set in JWKS_JSON, as the stack delivers it. */
  deliveredKeys: boolean;
  /** Variables added to the process's environment for this subject only. */
  environment?: Record<string, string>;
}

/** What one set of fresh processes runs under: round trips, and a CPU share or a whole core. */
export interface ColdPathConditionSpec {
  roundTrips: RoundTrips;
  share?: FreshProcessShare;
  /** Creates each process answers after its first, on the warm instance (0 unless said). */
  warmCalls?: number;
  /** The subjects measured under it, by name; all when absent. */
  subjectNames?: string[];
  /** Processes per subject in each round (1 unless said): more samples for a budget row. */
  processesPerRound?: number;
}

export interface ColdPathSetup {
  subjects: ColdPathSubject[];
  /** The harness's configuration: plain-HTTP dynalite (with the table) and key-set server. */
  environment: Record<string, string>;
  token: string;
  /** The issuer's public key set (compact JSON): JWKS_JSON of the subjects with `deliveredKeys`. */
  deliveredKeySet: string;
  conditions: ColdPathConditionSpec[];
  rounds: number;
}

/**
 * A subject's processes under one condition some of which answered other than 200: a measured outcome
 * (a starved function's store calls outrun their time limits and it answers 503), not a crash.
 */
export interface FailedProcesses {
  /** How many processes there were: all the subject's, or for warm creates those that made any. */
  of: number;
  /** The answer that was not a 200 of each process that gave one, in the order they ran. */
  answers: FailedAnswer[];
}

export interface ColdPathCondition extends ColdPathConditionSpec {
  /** First-answer times by subject name, of the processes whose first answer was a 200. */
  firstMs: Map<string, Summary>;
  /** The CPU time each process spent over the same span, by subject name. */
  firstCpuMs: Map<string, Summary>;
  /** Wall time of each warm create after the first, by subject name (only with warmCalls). */
  warmMs: Map<string, Summary>;
  /** By subject name, only those some of whose processes' first answer was not a 200 (no warm call after it). */
  firstFailed: Map<string, FailedProcesses>;
  /** By subject name, only those a warm create of which was not a 200 (that process's warm calls stopped). */
  warmFailed: Map<string, FailedProcesses>;
}

/** "503 in 1 of 5": the statuses answered, each once, and how many processes answered them. */
export function failedCount({ of, answers }: FailedProcesses): string {
  const statuses = [...new Set(answers.map((answer) => answer.status))].join("/");
  return `${statuses} in ${answers.length} of ${of}`;
}

/** "503 in 1 of 5, first: 503: the plant store did not confirm …": the count and the first message. */
export function failedSummary(failed: FailedProcesses): string {
  const first = failed.answers[0];
  return first === undefined
    ? failedCount(failed)
    : `${failedCount(failed)}, first: ${describeFailure(first)}`;
}

/** A new connection and one request: TCP handshake, TLS 1.3 handshake, request and answer. */
export const NEW_CONNECTION_ROUND_TRIPS = 3;

export async function measureColdPath(setup: ColdPathSetup): Promise<ColdPathCondition[]> {
  const network = await startModelledNetwork(setup.environment);
  try {
    const environment = measuredEnvironment(setup.environment, network);
    const samples = await sampleRounds(setup, network, environment);
    return setup.conditions.map((condition, index) => ({
      ...condition,
      firstMs: summaries(samples[index]?.firstMs),
      firstCpuMs: summaries(samples[index]?.firstCpuMs),
      warmMs: summaries(samples[index]?.warmMs),
      firstFailed: failures(samples[index]?.processes, samples[index]?.firstFailed),
      warmFailed: failures(samples[index]?.warmProcesses, samples[index]?.warmFailed),
    }));
  } finally {
    await network.close();
  }
}

/** The store and the key set behind TLS, each with its injected round-trip time, and their CA. */
interface ModelledNetwork {
  store: RemoteEndpoint;
  issuer: RemoteEndpoint;
  certificates: LoopbackCertificates;
  /** The key set's path on the issuer, as the harness serves it. */
  jwksPath: string;
  close(): Promise<void>;
}

/** Samples of one condition, by subject name. */
interface ConditionSamples {
  firstMs: Map<string, number[]>;
  firstCpuMs: Map<string, number[]>;
  warmMs: Map<string, number[]>;
  /** Processes run, and those that made warm calls. */
  processes: Map<string, number>;
  warmProcesses: Map<string, number>;
  firstFailed: Map<string, FailedAnswer[]>;
  warmFailed: Map<string, FailedAnswer[]>;
}

async function startModelledNetwork(harnessEnvironment: Record<string, string>): Promise<ModelledNetwork> {
  const storeUrl = new URL(required(harnessEnvironment, "AWS_ENDPOINT_URL_DYNAMODB"));
  const jwksUrl = new URL(required(harnessEnvironment, "JWKS_URL"));
  const certificates = await createLoopbackCertificates();
  const endpointOptions = { key: certificates.key, cert: certificates.cert, roundTripMs: 0 };
  const store = await startRemoteEndpoint({ ...endpointOptions, upstreamPort: Number(storeUrl.port) });
  const issuer = await startRemoteEndpoint({ ...endpointOptions, upstreamPort: Number(jwksUrl.port) });
  return {
    store,
    issuer,
    certificates,
    jwksPath: jwksUrl.pathname,
    async close() {
      await Promise.all([store.close(), issuer.close()]);
      await certificates.remove();
    },
  };
}

/** The harness's environment pointed at the modelled network, with the CA trusted and init as in Lambda. */
function measuredEnvironment(
  harnessEnvironment: Record<string, string>,
  { store, issuer, certificates, jwksPath }: ModelledNetwork,
): Record<string, string> {
  return {
    ...harnessEnvironment,
    AWS_ENDPOINT_URL_DYNAMODB: store.origin,
    JWKS_URL: `${issuer.origin}${jwksPath}`,
    NODE_EXTRA_CA_CERTS: certificates.caPath,
    AWS_LAMBDA_FUNCTION_NAME: "plant-store-bench",
  };
}

/**
 * Every round: each condition (its round trips set on the network) and in it each of its subjects, one
 * fresh process each, the order rotated per round so drift falls on all.
 */
async function sampleRounds(
  setup: ColdPathSetup,
  { store, issuer }: ModelledNetwork,
  environment: Record<string, string>,
): Promise<ConditionSamples[]> {
  const event = JSON.stringify(apiGatewayEvent("2.0", { token: setup.token }));
  const samples = setup.conditions.map((condition) => emptySamples(subjectsOf(setup, condition)));
  let nextId = Date.now() * 1000 + 1_000_000_000;
  for (let round = 0; round < setup.rounds; round++) {
    for (const [index, condition] of rotate([...setup.conditions.entries()], round)) {
      const { roundTrips, share } = condition;
      const warmCalls = condition.warmCalls ?? 0;
      store.setRoundTripMs(roundTrips.storeMs);
      issuer.setRoundTripMs(roundTrips.issuerMs);
      const turns = Array.from({ length: condition.processesPerRound ?? 1 }, () =>
        rotate(subjectsOf(setup, condition), round),
      ).flat();
      for (const subject of turns) {
        const profileFolder = `cold-path/${profileLabel(condition)}/${slug(subject.name)}`;
        const keys: Record<string, string> = subject.deliveredKeys
          ? { JWKS_JSON: setup.deliveredKeySet }
          : {};
        const outcome = await timeFreshProcess(
          subject.bundlePath,
          { ...environment, ...keys, ...subject.environment },
          event,
          nextId,
          warmCalls,
          profileFolder,
          share,
        );
        nextId += warmCalls + 1;
        const taken = samples[index];
        if (taken !== undefined) takeSample(taken, subject.name, outcome, warmCalls);
      }
    }
  }
  return samples;
}

/** One process's outcome into its condition's samples: its times, or its answer that was not a 200. */
function takeSample(
  samples: ConditionSamples,
  name: string,
  outcome: FreshProcessOutcome,
  warmCalls: number,
): void {
  count(samples.processes, name);
  if ("failed" in outcome) {
    samples.firstFailed.get(name)?.push(outcome.failed);
    return;
  }
  samples.firstMs.get(name)?.push(outcome.firstMs);
  samples.firstCpuMs.get(name)?.push(outcome.firstCpuMs);
  samples.warmMs.get(name)?.push(...outcome.warmMs);
  if (warmCalls > 0) count(samples.warmProcesses, name);
  if (outcome.warmFailed !== undefined) samples.warmFailed.get(name)?.push(outcome.warmFailed);
}

function count(counts: Map<string, number>, name: string): void {
  counts.set(name, (counts.get(name) ?? 0) + 1);
}

function subjectsOf(setup: ColdPathSetup, condition: ColdPathConditionSpec): ColdPathSubject[] {
  return setup.subjects.filter((subject) => condition.subjectNames?.includes(subject.name) ?? true);
}

function emptySamples(subjects: ColdPathSubject[]): ConditionSamples {
  const empty = <T>() => new Map(subjects.map((subject) => [subject.name, [] as T[]]));
  return {
    firstMs: empty(),
    firstCpuMs: empty(),
    warmMs: empty(),
    processes: new Map(),
    warmProcesses: new Map(),
    firstFailed: empty(),
    warmFailed: empty(),
  };
}

/** A summary per subject that has samples. */
function summaries(samples: Map<string, number[]> | undefined): Map<string, Summary> {
  return new Map(
    [...(samples ?? [])]
      .filter(([, values]) => values.length > 0)
      .map(([name, values]) => [name, summarize(values)]),
  );
}

/** The subjects some of whose processes answered other than 200, with how many there were. */
function failures(
  processes: Map<string, number> | undefined,
  failed: Map<string, FailedAnswer[]> | undefined,
): Map<string, FailedProcesses> {
  return new Map(
    [...(failed ?? [])]
      .filter(([, answers]) => answers.length > 0)
      .map(([name, answers]) => [name, { of: processes?.get(name) ?? answers.length, answers }]),
  );
}

function profileLabel({ roundTrips, share }: ColdPathConditionSpec): string {
  const cpu = share === undefined ? "full-core" : `${slug(share.procsFile.split("/").at(-2) ?? "share")}`;
  return `rtt-store-${roundTrips.storeMs}-issuer-${roundTrips.issuerMs}-${cpu}${share?.initAtFullCore ? "-init-full" : ""}`;
}

function slug(name: string): string {
  return name
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-|-$/g, "");
}

/** The items starting at `by` (mod length): each round starts with another, so drift falls on all. */
function rotate<T>(items: readonly T[], by: number): T[] {
  const start = by % Math.max(1, items.length);
  return [...items.slice(start), ...items.slice(0, start)];
}

function required(environment: Record<string, string>, name: string): string {
  const value = environment[name];
  if (value === undefined) throw new Error(`${name} is not in the harness's environment`);
  return value;
}
