import { AsyncLocalStorage } from "node:async_hooks";
import * as dgram from "node:dgram";
import type { KeySetFetchObserver } from "../auth/key-set-download.ts";
import { createDaemonClient, type DaemonClient } from "./daemon-client.ts";
import type { DynamoDbCallOutcome } from "./subsegments.ts";
import {
  type CallTimes,
  dynamoDbSubsegment,
  keySetFetchSubsegment,
  type TracedHeader,
} from "./subsegments.ts";
import type { DaemonAddress } from "./trace-header.ts";

/** Called as a DynamoDB call starts; what it returns, if anything, once as it ends. */
type DynamoDbCallObserver = (operation: string) => ((outcome: DynamoDbCallOutcome) => void) | undefined;

export interface TracingSettings {
  /** AWS_XRAY_DAEMON_ADDRESS, read (sampled-tracing.ts). */
  address: DaemonAddress;
  /** DynamoDB's error types that are throttles: flagged `throttle` (lambda/store/dynamodb-faults.ts). */
  throttlingTypes: ReadonlySet<string>;
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
  /** Runs one sampled invocation inside its trace. */
  run<T>(header: TracedHeader, invocation: () => Promise<T>): Promise<T>;
  observeDynamoDbCall: DynamoDbCallObserver;
  observeKeySetFetch: KeySetFetchObserver;
}

/**
 * Loaded at the first sampled invocation (sampled-tracing.ts), with node:async_hooks and node:dgram; its
 * first subsegment opens the socket. It imports nothing of the function's but types: a chunk of its own.
 */
export function createInvocationTracing(settings: TracingSettings): InvocationTracing {
  const storage = new AsyncLocalStorage<InvocationContext>();
  const daemon = createDaemonClient(settings.address, dgram);
  const contextOfCall = (): InvocationContext | undefined => storage.getStore();

  return {
    run(header, invocation) {
      return storage.run(new InvocationContext(header, daemon), invocation);
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
            throttled: outcome.errorType !== undefined && settings.throttlingTypes.has(outcome.errorType),
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

/** Where a call's subsegment goes: the trace of the invocation it was made for. */
class InvocationContext {
  readonly #counts = new Map<string, number>();
  constructor(
    readonly trace: TracedHeader,
    readonly daemon: DaemonClient,
  ) {}
  /** How many calls of `operation` this invocation made before; counts this one. */
  countCall(operation: string): number {
    const count = (this.#counts.get(operation) ?? 0) + 1;
    this.#counts.set(operation, count);
    return count;
  }
  /** Sends the call's subsegment; one that cannot be built is dropped: tracing never fails a request. */
  send(build: (trace: TracedHeader) => object): void {
    let document: object;
    try {
      document = build(this.trace);
    } catch {
      return;
    }
    this.daemon.send(document);
  }
}
