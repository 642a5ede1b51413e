import { embeddedMetrics, type MetricCounts, type MetricSource } from "./metrics.ts";

export interface RequestLogEntry {
  requestId: string;
  /** The X-Ray trace id (Root of the invocation's trace header), when Lambda gives one: the way to its trace. */
  traceId?: string | undefined;
  status: number;
  latencyMs: number;
  /** Of latencyMs, the time spent waiting on the store and on the token issuer (lambda/call-timings.ts). */
  storeMs: number;
  issuerMs: number;
  errorKind?: string;
  /** The authenticated caller's OAuth client, for audit: an identifier, not a credential. */
  clientId?: string | undefined;
  plantId?: string;
  /** For 5xx answers only: what failed underneath, never a credential. */
  detail?: string;
}

/**
 * One JSON line per request on stdout, carrying the request's metrics in Embedded Metric Format. Written
 * around the runtime's console so the line stays a top-level JSON object under either log format: that
 * is what lets Logs Insights query its fields and CloudWatch extract its metrics.
 */
export function logRequest(entry: RequestLogEntry, source: MetricSource, metrics: MetricCounts): void {
  const line = {
    level: entry.status >= 500 ? "ERROR" : "INFO",
    ...entry,
    ...embeddedMetrics(source, metrics, Date.now()),
  };
  process.stdout.write(`${JSON.stringify(line)}\n`);
}

/**
 * Has Node create process.stdout (at its first use, ~0.7 ms for a pipe, as Lambda's is) in the event loop's
 * next turn: while the cold start's first request waits on the store, not after its answer.
 */
export function openRequestLogSoon(): void {
  setImmediate(() => process.stdout);
}

/** One WARN line on stderr (stdout is one JSON line per request); never a credential or key in `fields`. */
export function logWarning(message: string, fields: Record<string, unknown>): void {
  process.stderr.write(`${JSON.stringify({ level: "WARN", message, ...fields })}\n`);
}

/** One WARN line for a failure no request sees (a prefetch, a refresh): the error's message is its detail. */
export function logFailure(message: string, error: unknown): void {
  logWarning(message, { detail: error instanceof Error ? error.message : String(error) });
}
