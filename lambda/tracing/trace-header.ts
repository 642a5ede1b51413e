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

/** Where the X-Ray daemon listens for segment documents (UDP). */
export interface DaemonAddress {
  host: string;
  port: number;
}

/**
 * `AWS_XRAY_DAEMON_ADDRESS` as Lambda and the X-Ray SDKs write it: `host:port` (`169.254.79.129:2000`,
 * `[::1]:2000`), or `tcp:host:port udp:host:port` of which the UDP one is used. Undefined if malformed.
 */
export function parseDaemonAddress(value: string): DaemonAddress | undefined {
  const entries = value.trim().split(/\s+/);
  const entry =
    entries.find((part) => part.startsWith("udp:"))?.slice(4) ??
    (entries.length === 1 ? entries[0] : undefined);
  const match = entry?.match(/^(?:\[([0-9a-fA-F:.]+)\]|([^\s:[\]]+)):(\d{1,5})$/);
  if (!match) return undefined;
  const port = Number(match[3]);
  if (port < 1 || port > 65_535) return undefined;
  return { host: match[1] ?? match[2] ?? "", port };
}
