import type { AsyncLocalStorage } from "node:async_hooks";
import type { KeySetFetchObserver } from "../auth/issuer-keys.ts";
import { logWarning } from "../log.ts";
import type { DynamoDbCallObserver } from "../store/dynamodb-client.ts";
import { THROTTLING_TYPES } from "../store/dynamodb-faults.ts";
import { createDaemonClient, type DaemonClient, parseDaemonAddress } from "./daemon-client.ts";
import {
  type CallTimes,
  dynamoDbSubsegment,
  keySetFetchSubsegment,
  type TracedHeader,
} from "./subsegments.ts";
import { isTraced, type TraceHeader } from "./trace-header.ts";

export interface TracingSettings {
  /** AWS_XRAY_DAEMON_ADDRESS. */
  daemonAddress: string;
  /** What the DynamoDB subsegments name: the store's table and Region. */
  tableName: string;
  region: string;
}

/**
 * The function's traces: for each invocation X-Ray samples, a subsegment per call the invocation waits on
 * (DynamoDB, the issuer's key set), sent to the daemon as the call ends. The hooks are told of every call
 * (dynamodb-client.ts, issuer-keys.ts); which invocation a call belongs to is the async context it
 * started in, so concurrent invocations (the local run) each get their own.
 */
export interface InvocationTracing {
  /** Runs one invocation, inside its trace when its header is sampled; as is otherwise. */
  run<T>(header: TraceHeader | undefined, invocation: () => Promise<T>): Promise<T>;
  observeDynamoDbCall: DynamoDbCallObserver;
  observeKeySetFetch: KeySetFetchObserver;
}

/** Where a call's subsegment goes: the trace of the invocation it was made for. */
interface TraceContext {
  /** Sends the call's subsegment, built for the trace once it is known. */
  send(build: (trace: TracedHeader) => object): void;
  /** How many calls of `operation` this context made before; counts this one. */
  countCall(operation: string): number;
}

type Loaded = { storage: AsyncLocalStorage<TraceContext>; daemon: DaemonClient };

/**
 * Nothing happens at creation but reading the address: no socket, no module loaded. The first sampled
 * invocation loads node:async_hooks and node:dgram; its first subsegment opens the socket. Unsampled
 * invocations cost a header parse and one comparison per call.
 *
 * The calls made at init (the key-set prefetch), before any invocation, belong to no trace yet: they are
 * held and sent with the first invocation's trace when it is sampled, under its segment, where Lambda
 * shows the init.
 */
export function createInvocationTracing(settings: TracingSettings): InvocationTracing | undefined {
  const address = parseDaemonAddress(settings.daemonAddress);
  if (address === undefined) {
    logWarning("AWS_XRAY_DAEMON_ADDRESS is not host:port; nothing is traced", {
      detail: settings.daemonAddress,
    });
    return undefined;
  }
  let loading: Promise<Loaded> | undefined;
  let loaded: Loaded | undefined;
  const load = () =>
    (loading ??= Promise.all([import("node:async_hooks"), import("node:dgram")]).then(([hooks, dgram]) => {
      loaded = { storage: new hooks.AsyncLocalStorage(), daemon: createDaemonClient(address, dgram) };
      return loaded;
    }));
  let init: InitContext | undefined = new InitContext();

  const contextOfCall = (): TraceContext | undefined => loaded?.storage.getStore() ?? init;

  return {
    run(header, invocation) {
      const traced = isTraced(header) ? header : undefined;
      if (init) {
        const calledAtInit = init;
        init = undefined;
        if (traced) {
          load().then(
            ({ daemon }) => calledAtInit.resolve(traced, daemon),
            () => calledAtInit.resolve(undefined, undefined),
          );
        } else calledAtInit.resolve(undefined, undefined);
      }
      if (!traced) return invocation();
      return load().then(
        ({ storage, daemon }) => storage.run(new InvocationContext(traced, daemon), invocation),
        // Tracing could not start: the invocation runs untraced rather than not at all.
        () => invocation(),
      );
    },

    observeDynamoDbCall(operation) {
      const context = contextOfCall();
      if (!context) return undefined;
      const retries = context.countCall(operation) - 1;
      const started = startClock();
      return (outcome) => {
        const times = started();
        context.send((trace) =>
          dynamoDbSubsegment(trace, {
            ...times,
            operation,
            tableName: settings.tableName,
            region: settings.region,
            retries,
            outcome,
            throttled: outcome.errorType !== undefined && THROTTLING_TYPES.has(outcome.errorType),
          }),
        );
      };
    },

    observeKeySetFetch(url) {
      const context = contextOfCall();
      if (!context) return undefined;
      const started = startClock();
      return (outcome) => {
        const times = started();
        context.send((trace) => keySetFetchSubsegment(trace, { ...times, url, outcome }));
      };
    },
  };
}

/**
 * A call's start and end in milliseconds since the epoch: the start from the wall clock (the timeline
 * the function's segment is on), the duration from the monotonic one (sub-millisecond, never negative).
 */
function startClock(): () => CallTimes {
  const startMs = Date.now();
  const startedAt = performance.now();
  return () => ({ startMs, endMs: startMs + (performance.now() - startedAt) });
}

/** What every context does alike: count its calls per operation. */
abstract class CountingContext implements TraceContext {
  readonly #counts = new Map<string, number>();
  abstract send(build: (trace: TracedHeader) => object): void;
  countCall(operation: string): number {
    const count = (this.#counts.get(operation) ?? 0) + 1;
    this.#counts.set(operation, count);
    return count;
  }
}

/** A sampled invocation: its subsegments go to the daemon as its calls end. */
class InvocationContext extends CountingContext {
  constructor(
    readonly trace: TracedHeader,
    readonly daemon: DaemonClient,
  ) {
    super();
  }
  send(build: (trace: TracedHeader) => object): void {
    sendSafely(this.daemon, () => build(this.trace));
  }
}

/** The calls made before the first invocation: held until it says whether, and where, to send them. */
class InitContext extends CountingContext {
  #held: ((trace: TracedHeader) => object)[] = [];
  /** Once the first invocation came: its trace and the daemon, or undefined when it is not sampled. */
  #target: { trace: TracedHeader; daemon: DaemonClient } | undefined | null = null;

  send(build: (trace: TracedHeader) => object): void {
    if (this.#target === null) this.#held.push(build);
    else if (this.#target) {
      const { trace, daemon } = this.#target;
      sendSafely(daemon, () => build(trace));
    }
  }
  resolve(trace: TracedHeader | undefined, daemon: DaemonClient | undefined): void {
    this.#target = trace && daemon ? { trace, daemon } : undefined;
    const held = this.#held;
    this.#held = [];
    for (const build of held) this.send(build);
  }
}

/** A subsegment that cannot be built is dropped: tracing never fails a request. */
function sendSafely(daemon: DaemonClient, build: () => object): void {
  let document: object;
  try {
    document = build();
  } catch {
    return;
  }
  daemon.send(document);
}
