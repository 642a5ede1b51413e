/**
 * The local run's stand-in for Lambda's tracing: when the user names a daemon (AWS_XRAY_DAEMON_ADDRESS),
 * every invocation is sampled, as X-Ray's sampling might pick it, so that the bundled handler sends its
 * subsegments there (print them with `npm run traces`).
 */
import { randomBytes } from "node:crypto";
import type { Handler } from "../lambda/http/create-handler.ts";
import { parseTraceHeader } from "../lambda/tracing/trace-header.ts";
import { newTraceRoot } from "./http-bridge.ts";

/**
 * The trace header Lambda gives an invocation it traces: the gateway's trace (the event's X-Amzn-Trace-Id
 * Root, see http-bridge.ts) and a segment of the function's own as the parent.
 */
function sampledTraceHeader(eventTraceHeader: string | undefined): string {
  const root = parseTraceHeader(eventTraceHeader)?.root ?? newTraceRoot();
  return `Root=${root};Parent=${randomBytes(8).toString("hex")};Sampled=1`;
}

/**
 * `handler`, each invocation sampled: `_X_AMZN_TRACE_ID` is set just before it, as Lambda's runtime sets
 * it, and the handler reads it as it starts, so concurrent invocations each get their own.
 */
export function sampleEveryInvocation(handler: Handler): Handler {
  return (event, context) => {
    const headers = (event.headers ?? {}) as Record<string, string | undefined>;
    process.env._X_AMZN_TRACE_ID = sampledTraceHeader(headers["x-amzn-trace-id"]);
    return handler(event, context);
  };
}
