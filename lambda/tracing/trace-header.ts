/**
 * The X-Ray trace header Lambda gives each invocation: `Root=1-5759e988-bd862e3fe1be46a994272793;
 * Parent=53995c3f42cd8ad8;Sampled=1`. `Parent` is the id of the function's segment, which Lambda records
 * itself when tracing is active; `Sampled=1` means X-Ray keeps this trace.
 */
export interface TraceHeader {
  /** The trace id, `1-<8 hex: epoch seconds>-<24 hex>`: what the log line carries. */
  root: string;
  /** The function segment's id (16 hex), the parent of the subsegments this function sends. */
  parent: string | undefined;
  sampled: boolean;
}

const TRACE_ID = /^1-[0-9a-f]{8}-[0-9a-f]{24}$/;
const SEGMENT_ID = /^[0-9a-f]{16}$/;

/** The header's fields; undefined when it has no well-formed Root (nothing to log or trace). */
export function parseTraceHeader(header: string | undefined): TraceHeader | undefined {
  if (!header) return undefined;
  const fields = new Map<string, string>();
  for (const part of header.split(";")) {
    const separator = part.indexOf("=");
    if (separator > 0) fields.set(part.slice(0, separator).trim(), part.slice(separator + 1).trim());
  }
  const root = fields.get("Root");
  if (root === undefined || !TRACE_ID.test(root)) return undefined;
  const parent = fields.get("Parent");
  return {
    root,
    parent: parent !== undefined && SEGMENT_ID.test(parent) ? parent : undefined,
    sampled: fields.get("Sampled") === "1",
  };
}

/**
 * This invocation's trace header. Lambda's Node runtime sets `_X_AMZN_TRACE_ID` before each invocation,
 * so it is read as the invocation starts, before anything awaits (the local run sets it the same way).
 */
export function invocationTraceHeader(): TraceHeader | undefined {
  return parseTraceHeader(process.env._X_AMZN_TRACE_ID);
}

/** Whether subsegments can be sent for this invocation: X-Ray keeps it, and its parent segment is named. */
export function isTraced(header: TraceHeader | undefined): header is TraceHeader & { parent: string } {
  return header?.sampled === true && header.parent !== undefined;
}
