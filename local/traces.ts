/**
 * `npm run traces`: a stand-in for the X-Ray daemon that prints each subsegment the handler sends it, one
 * line each, on AWS_XRAY_DAEMON_ADDRESS (default 127.0.0.1:2000). Run it beside `npm start` started with
 * the same variable (see docs/LOCAL.md).
 */
import { createSocket } from "node:dgram";
import { fileURLToPath } from "node:url";
import { DAEMON_HEADER } from "../lambda/tracing/daemon-client.ts";
import { parseDaemonAddress } from "../lambda/tracing/trace-header.ts";
import { daemonAddressFrom } from "./local-settings.ts";

const DEFAULT_DAEMON_ADDRESS = "127.0.0.1:2000";

/**
 * The segment document a datagram sent to the daemon carries (the daemon header line, then one JSON
 * document): undefined when the datagram lacks the header; throws when what follows it is not JSON.
 */
export function segmentDocumentOf(text: string): Record<string, unknown> | undefined {
  if (!text.startsWith(DAEMON_HEADER)) return undefined;
  return JSON.parse(text.slice(DAEMON_HEADER.length)) as Record<string, unknown>;
}

/**
 * `text` with every control character written as an escape (`\x1b`, `\x0a`, `\u2028`), and so is every
 * bidirectional override: a datagram is anyone's to send, and printed raw its ANSI sequences, line breaks
 * or reordered text would rewrite or forge the terminal's lines.
 */
export function printable(text: string): string {
  return text.replace(/[\p{Cc}\u2028\u2029\u200e\u200f\u202a-\u202e\u2066-\u2069]/gu, (character) => {
    const code = character.charCodeAt(0);
    return code < 0x100
      ? `\\x${code.toString(16).padStart(2, "0")}`
      : `\\u${code.toString(16).padStart(4, "0")}`;
  });
}

/**
 * One line for a segment document: when it started, its trace, what was called and how it ended, and how
 * long it took. `12:00:01.234 1-6740b1d2-… DynamoDB PutItem 400 error throttle ThrottlingException retries=0 3.1 ms`
 */
export function describeSubsegment(document: Record<string, unknown>): string {
  const start = Number(document.start_time);
  const end = Number(document.end_time);
  const aws = (document.aws ?? {}) as Record<string, unknown>;
  const http = (document.http ?? {}) as {
    request?: { method?: string; url?: string };
    response?: { status?: number };
  };
  const cause = document.cause as { exceptions?: { type?: string }[] } | undefined;
  const what =
    document.namespace === "aws"
      ? [document.name, aws.operation, aws.table_name]
      : [document.name, http.request?.method, http.request?.url];
  return [
    Number.isFinite(start) ? new Date(start * 1000).toISOString().slice(11, 23) : "?",
    document.trace_id,
    ...what,
    http.response?.status ?? "no answer",
    ...["error", "throttle", "fault"].filter((flag) => document[flag] === true),
    ...(cause?.exceptions ?? []).map((exception) => exception.type),
    ...(aws.retries === undefined ? [] : [`retries=${aws.retries}`]),
    Number.isFinite(start) && Number.isFinite(end) ? `${((end - start) * 1000).toFixed(1)} ms` : "",
  ]
    .filter((part) => part !== undefined && part !== "")
    .join(" ");
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const given = daemonAddressFrom(process.env) ?? DEFAULT_DAEMON_ADDRESS;
  const address = parseDaemonAddress(given);
  if (address === undefined) {
    console.error(`npm run traces: AWS_XRAY_DAEMON_ADDRESS must be host:port, got '${given}'`);
    process.exit(1);
  }
  const socket = createSocket(address.host.includes(":") ? "udp6" : "udp4");
  socket.on("message", (message) => {
    const text = message.toString("utf8");
    try {
      const document = segmentDocumentOf(text);
      if (document === undefined) return console.log(printable(`(not a segment document) ${text}`));
      console.log(printable(describeSubsegment(document)));
    } catch {
      console.log(printable(`(unreadable) ${text}`));
    }
  });
  socket.on("error", (error) => {
    console.error(`npm run traces: ${error.message}`);
    process.exit(1);
  });
  socket.bind(address.port, address.host, () => {
    console.log(`printing the subsegments sent to udp ${address.host}:${address.port}; Ctrl-C stops it`);
  });
}
