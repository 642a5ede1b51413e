import type { KeySetFetchOutcome } from "../auth/key-set-download.ts";

/** How one DynamoDB call ended: its answer's status, request id and error type, or why none came. */
export interface DynamoDbCallOutcome {
  status?: number;
  requestId?: string | undefined;
  errorType?: string;
  failure?: unknown;
}

import type { TraceHeader } from "./trace-header.ts";

/**
 * X-Ray subsegment documents, sent on their own (`type: "subsegment"`) under the function's segment:
 * one per call to DynamoDB (namespace `aws`, so that the table shows in the trace map as a DynamoDB
 * node) and one per key-set download (namespace `remote`). They carry what X-Ray documents for them and
 * nothing of a token, a key or a body.
 */

/** The segment the subsegments hang under, and the trace: from the invocation's trace header. */
export type TracedHeader = TraceHeader & { parent: string };

/** When a call ran, in milliseconds since the epoch. */
export interface CallTimes {
  startMs: number;
  endMs: number;
}

/** A 64-bit id in 16 hex digits, as X-Ray wants for segments and exceptions. */
function newSegmentId(): string {
  return Buffer.from(crypto.getRandomValues(new Uint8Array(8))).toString("hex");
}

function subsegment(
  trace: TracedHeader,
  name: string,
  { startMs, endMs }: CallTimes,
): Record<string, unknown> {
  return {
    type: "subsegment",
    name,
    id: newSegmentId(),
    trace_id: trace.root,
    parent_id: trace.parent,
    start_time: startMs / 1000,
    end_time: endMs / 1000,
  };
}

/**
 * X-Ray's flags for an outcome: `fault` for a 5xx or no answer at all, `error` for a 4xx, `throttle`
 * as well for a throttled call; `cause` names what failed (a type and a message of ours, never a body).
 */
function outcomeFlags(
  status: number | undefined,
  throttled: boolean,
  failure: { type: string; message: string } | undefined,
): Record<string, unknown> {
  const flags: Record<string, unknown> = {};
  if (status === undefined || status >= 500) flags.fault = true;
  else if (status >= 400) flags.error = true;
  if (throttled) flags.throttle = true;
  if (failure) {
    flags.cause = {
      exceptions: [{ id: newSegmentId(), type: failure.type, message: failure.message, remote: true }],
    };
  }
  return flags;
}

/** The name and message of a failure with no usable answer (a timeout, a reset, an unreadable body). */
function describeFailure(failure: unknown): { type: string; message: string } {
  if (!(failure instanceof Error)) return { type: "Error", message: String(failure) };
  return { type: failure.name, message: failure.message };
}

export interface DynamoDbCall extends CallTimes {
  operation: string;
  tableName: string;
  region: string;
  /** Calls of the same operation this request made before this one. */
  retries: number;
  outcome: DynamoDbCallOutcome;
  /** Whether DynamoDB's error type is a throttling one. */
  throttled: boolean;
}

export function dynamoDbSubsegment(trace: TracedHeader, call: DynamoDbCall): Record<string, unknown> {
  const { status, requestId, errorType, failure } = call.outcome;
  const answered = status !== undefined && failure === undefined;
  return {
    ...subsegment(trace, "DynamoDB", call),
    namespace: "aws",
    aws: {
      operation: call.operation,
      region: call.region,
      table_name: call.tableName,
      retries: call.retries,
      ...(requestId === undefined ? {} : { request_id: requestId }),
    },
    ...(answered ? { http: { response: { status } } } : {}),
    ...outcomeFlags(
      answered ? status : undefined,
      call.throttled || status === 429,
      answered
        ? errorType === undefined
          ? undefined
          : { type: errorType, message: `DynamoDB answered ${status} ${errorType}` }
        : describeFailure(failure),
    ),
  };
}

export interface KeySetFetch extends CallTimes {
  url: string;
  outcome: KeySetFetchOutcome;
}

export function keySetFetchSubsegment(trace: TracedHeader, fetch: KeySetFetch): Record<string, unknown> {
  const { status, failure } = fetch.outcome;
  const url = new URL(fetch.url);
  return {
    // X-Ray's limits: a name of at most 200 characters, none of them brackets (an IPv6 host's); a URL of 250.
    ...subsegment(trace, url.host.replace(/[[\]]/g, "").slice(0, 200), fetch),
    namespace: "remote",
    http: {
      // Without query, fragment or credentials: only where the key set is.
      request: { method: "GET", url: `${url.origin}${url.pathname}`.slice(0, 250) },
      ...(status === undefined ? {} : { response: { status } }),
    },
    ...outcomeFlags(
      status,
      status === 429,
      status === undefined
        ? describeFailure(failure)
        : status === 200
          ? undefined
          : { type: "KeySetFetchError", message: `the issuer answered ${status}` },
    ),
  };
}
