/**
 * What the cold path measures (items 2 and M), with the network time the model predicts for each, in
 * round trips: a new connection and one request cost 3, a connection opened without a request 2. The
 * handler as it ships has the issuer's key set delivered (JWKS_JSON): its first answer waits for the
 * store alone (the connection opened at init, then the PutItem once the token is checked). Without
 * delivered keys it verifies the token with a key set fetched on a new connection to the issuer first,
 * then writes, on a connection opened at init when the store is prewarmed, else on a new one.
 */
import { join } from "node:path";
import type { BenchBundles } from "../bundles.ts";
import { PROJECT_ROOT } from "../child-process.ts";
import {
  type ColdPathCondition,
  type ColdPathSubject,
  type FailedProcesses,
  failedCount,
  NEW_CONNECTION_ROUND_TRIPS,
  type RoundTrips,
} from "../cold-path.ts";
import type { Summary } from "../stats.ts";

const STORE_FLOOR = "store floor";
export const ISSUER_FREE_FLOOR = "issuer-free floor";
const ISSUER_FREE_FLOOR_WITH_DUTIES = "issuer-free floor with duties";
export const VERIFYING_FLOOR = "verifying floor";
export const HANDLER = "handler (shipped, delivered keys)";
const HANDLER_WITHOUT_DELIVERED_KEYS = "handler without delivered keys";
export const ZERO: RoundTrips = { storeMs: 0, issuerMs: 0 };

/** Where the "handler with V8 code cache" subject's processes keep their cache: emptied by item 2. */
export const COMPILE_CACHE_DIRECTORY = join(PROJECT_ROOT, "dist/bench/compile-cache");

export interface ExtraBundle {
  name: string;
  path: string;
  storePrewarmed: boolean;
  deliveredKeys: boolean;
}

export function coldPathSubjects(bundles: BenchBundles, extra: ExtraBundle[]): ColdPathSubject[] {
  const newConnection = (rtt: number) => NEW_CONNECTION_ROUND_TRIPS * rtt;
  // A connection opened without a request: the TCP and TLS handshakes, one round trip less.
  const handshake = (rtt: number) => (NEW_CONNECTION_ROUND_TRIPS - 1) * rtt;
  // With the keys in hand, only the store's round trips: its connection (from init, or after the
  // check), then the PutItem; what the CPU of the import and the check hides of them is not counted.
  const storeOnly = (rtt: RoundTrips) => newConnection(rtt.storeMs);
  const handlerNetwork =
    ({ storePrewarmed, deliveredKeys }: { storePrewarmed: boolean; deliveredKeys: boolean }) =>
    (rtt: RoundTrips) =>
      deliveredKeys
        ? storeOnly(rtt)
        : newConnection(rtt.issuerMs) + (storePrewarmed ? rtt.storeMs : newConnection(rtt.storeMs));
  const handlers = [
    { name: HANDLER, path: bundles.handlerPath, storePrewarmed: true, deliveredKeys: true },
    {
      name: HANDLER_WITHOUT_DELIVERED_KEYS,
      path: bundles.handlerPath,
      storePrewarmed: true,
      deliveredKeys: false,
    },
    ...bundles.leverVariants.map((variant) => ({
      ...variant,
      name: `handler ${variant.name}`,
      deliveredKeys: true,
    })),
    ...extra,
  ];
  // The key set's connection and request, the store's connection beside it, then the PutItem.
  const verifyingNetwork = (rtt: RoundTrips) =>
    Math.max(newConnection(rtt.issuerMs), handshake(rtt.storeMs)) + rtt.storeMs;
  return [
    { name: STORE_FLOOR, bundlePath: bundles.storeFloorPath, deliveredKeys: false, networkMs: storeOnly },
    {
      name: ISSUER_FREE_FLOOR,
      bundlePath: bundles.issuerFreeFloorPath,
      deliveredKeys: true,
      networkMs: storeOnly,
    },
    // The same with the API's duties done plainly (bench/floor-with-duties.ts): information, what the
    // handler costs beyond them.
    {
      name: ISSUER_FREE_FLOOR_WITH_DUTIES,
      bundlePath: bundles.issuerFreeFloorWithDutiesPath,
      deliveredKeys: true,
      networkMs: storeOnly,
    },
    {
      name: VERIFYING_FLOOR,
      bundlePath: bundles.verifyingFloorPath,
      deliveredKeys: false,
      networkMs: verifyingNetwork,
    },
    // The peers check the token with the delivered keys, as the issuer-free floor does: their rows
    // show their store client's cost alone.
    ...bundles.peers.map((peer) => ({
      name: peer.name,
      bundlePath: peer.path,
      deliveredKeys: true,
      networkMs: storeOnly,
    })),
    ...handlers.map((subject) => ({
      name: subject.name,
      bundlePath: subject.path,
      deliveredKeys: subject.deliveredKeys,
      networkMs: handlerNetwork(subject),
    })),
    // V8's code cache for the bundle, kept by Node (22.1+) in NODE_COMPILE_CACHE and filled by this
    // subject's first process: what shipping a cache in the asset could save at most. Node 20 ignores it.
    {
      name: "handler with V8 code cache",
      bundlePath: bundles.handlerPath,
      deliveredKeys: true,
      environment: { NODE_COMPILE_CACHE: COMPILE_CACHE_DIRECTORY },
      networkMs: storeOnly,
    },
  ];
}

/**
 * One subject's first answer under a condition, wall and CPU time; or, when a budget cannot rest on it,
 * why: processes of it that did not answer 200 ("the handler 503 in 1 of 5"), or none measured.
 */
export type FirstAnswer = { wall: Summary; cpu: Summary } | { unread: string };

export function firstAnswerOf(condition: ColdPathCondition, name: string, description: string): FirstAnswer {
  const failed = condition.firstFailed.get(name);
  if (failed !== undefined) return { unread: `${description} ${failedCount(failed)}` };
  const wall = condition.firstMs.get(name);
  const cpu = condition.firstCpuMs.get(name);
  if (wall === undefined || cpu === undefined) return { unread: `${description} not measured` };
  return { wall, cpu };
}

/**
 * A cell of what answered, and of what did not: "1698.6 (1079.9–1960.4) ms; 503 in 1 of 5", or
 * "503 in 5 of 5" when none answered 200, or "—" when nothing was measured.
 */
export function answeredCell(answered: string | undefined, failed: FailedProcesses | undefined): string {
  if (failed === undefined) return answered ?? "—";
  return answered === undefined ? failedCount(failed) : `${answered}; ${failedCount(failed)}`;
}

export function conditionJson(condition: ColdPathCondition) {
  return {
    roundTrips: condition.roundTrips,
    share: condition.share,
    firstMs: Object.fromEntries(condition.firstMs),
    firstCpuMs: Object.fromEntries(condition.firstCpuMs),
    warmMs: Object.fromEntries(condition.warmMs),
    firstFailed: Object.fromEntries(condition.firstFailed),
    warmFailed: Object.fromEntries(condition.warmFailed),
  };
}

export function rttLabel({ storeMs, issuerMs }: RoundTrips): string {
  return storeMs === 0 && issuerMs === 0 ? "RTT 0" : `RTT ${storeMs}/${issuerMs}`;
}
