/**
 * What the cold path measures (items 2 and M), with the network time the model predicts for each, in
 * round trips: a new connection and one request cost 3; the handler verifies the token (a new
 * connection to the issuer) before it writes, on a connection opened at init when the store is
 * prewarmed, else on a new one.
 */
import { join } from "node:path";
import type { BenchBundles } from "../bundles.ts";
import { PROJECT_ROOT } from "../child-process.ts";
import {
  type ColdPathCondition,
  type ColdPathSubject,
  NEW_CONNECTION_ROUND_TRIPS,
  type RoundTrips,
} from "../cold-path.ts";
import type { Summary } from "../stats.ts";

const STORE_FLOOR = "store floor";
export const VERIFYING_FLOOR = "verifying floor";
const UNORDERED_FLOOR = "unordered floor";
export const HANDLER = "handler (shipped)";
export const ZERO: RoundTrips = { storeMs: 0, issuerMs: 0 };

/** Where the "handler with V8 code cache" subject's processes keep their cache: emptied by item 2. */
export const COMPILE_CACHE_DIRECTORY = join(PROJECT_ROOT, "dist/bench/compile-cache");

export interface ExtraBundle {
  name: string;
  path: string;
  storePrewarmed: boolean;
}

export function coldPathSubjects(bundles: BenchBundles, extra: ExtraBundle[]): ColdPathSubject[] {
  const newConnection = (rtt: number) => NEW_CONNECTION_ROUND_TRIPS * rtt;
  // A connection opened without a request: the TCP and TLS handshakes, one round trip less.
  const handshake = (rtt: number) => (NEW_CONNECTION_ROUND_TRIPS - 1) * rtt;
  const handlers = [
    { name: HANDLER, path: bundles.handlerPath, storePrewarmed: true },
    ...bundles.leverVariants.map((variant) => ({ ...variant, name: `handler ${variant.name}` })),
    ...extra,
  ];
  // The key set's connection and request, the store's connection beside it, then the PutItem.
  const verifyingNetwork = (rtt: RoundTrips) =>
    Math.max(newConnection(rtt.issuerMs), handshake(rtt.storeMs)) + rtt.storeMs;
  return [
    { name: STORE_FLOOR, bundlePath: bundles.storeFloorPath, networkMs: (rtt) => newConnection(rtt.storeMs) },
    { name: VERIFYING_FLOOR, bundlePath: bundles.verifyingFloorPath, networkMs: verifyingNetwork },
    {
      name: UNORDERED_FLOOR,
      bundlePath: bundles.unorderedFloorPath,
      networkMs: (rtt) => Math.max(newConnection(rtt.storeMs), newConnection(rtt.issuerMs)),
    },
    ...bundles.peers.map((peer) => ({
      name: peer.name,
      bundlePath: peer.path,
      networkMs: (rtt: RoundTrips) => newConnection(rtt.issuerMs) + newConnection(rtt.storeMs),
    })),
    ...handlers.map(({ name, path, storePrewarmed }) => ({
      name,
      bundlePath: path,
      networkMs: (rtt: RoundTrips) =>
        newConnection(rtt.issuerMs) + (storePrewarmed ? rtt.storeMs : newConnection(rtt.storeMs)),
    })),
    // V8's code cache for the bundle, kept by Node (22.1+) in NODE_COMPILE_CACHE and filled by this
    // subject's first process: what shipping a cache in the asset could save at most. Node 20 ignores it.
    {
      name: "handler with V8 code cache",
      bundlePath: bundles.handlerPath,
      environment: { NODE_COMPILE_CACHE: COMPILE_CACHE_DIRECTORY },
      networkMs: (rtt: RoundTrips) => newConnection(rtt.issuerMs) + rtt.storeMs,
    },
  ];
}

/** One subject's first answer under a condition: wall and CPU time; an error when it was not measured. */
export function firstAnswerOf(
  condition: ColdPathCondition,
  name: string,
  description: string,
): { wall: Summary; cpu: Summary } {
  const wall = condition.firstMs.get(name);
  const cpu = condition.firstCpuMs.get(name);
  if (wall === undefined || cpu === undefined) throw new Error(`${description} was not measured`);
  return { wall, cpu };
}

export function conditionJson(condition: ColdPathCondition) {
  return {
    roundTrips: condition.roundTrips,
    share: condition.share,
    firstMs: Object.fromEntries(condition.firstMs),
    firstCpuMs: Object.fromEntries(condition.firstCpuMs),
    warmMs: Object.fromEntries(condition.warmMs),
  };
}

export function rttLabel({ storeMs, issuerMs }: RoundTrips): string {
  return storeMs === 0 && issuerMs === 0 ? "RTT 0" : `RTT ${storeMs}/${issuerMs}`;
}
