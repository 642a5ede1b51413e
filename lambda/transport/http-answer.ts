/**
 * An HTTP/1.1 answer (RFC 9112), read as its bytes come, for lambda/transport/http-request.ts: the status
 * line, the header fields, and the body framed by Content-Length, by chunked transfer coding, or by the
 * connection's close. What is not such an answer throws. node:http's parser reads the same bytes the same
 * way: test/hardening/http-answer-differential.test.ts.
 */
import { commaList } from "../comma-list.ts";
import { withoutOptionalWhitespace } from "../optional-whitespace.ts";

export interface Answer {
  status: number;
  /** Names in lower case; the values of a name sent more than once joined with ", ". */
  headers: Record<string, string>;
  body: Buffer;
}

/** An answer read whole, and whether its connection may carry another request. */
export type ReadAnswer = Answer & { keepAlive: boolean };

/** An answer larger than this is not one of DynamoDB's or a JWKS: refuse it rather than buffer it. */
export const MAX_ANSWER_BYTES = 1024 * 1024;
/** node:http's default limit on an answer's head. */
const MAX_HEAD_BYTES = 16 * 1024;

const STATUS_LINE = /^HTTP\/1\.([01]) (\d{3})(?: .*)?$/;
const FIELD = /^([!#$%&'*+\-.^_`|~0-9A-Za-z]+):([\t\x20-\x7e\x80-\xff]*)$/;
const CHUNK_SIZE = /^([0-9A-Fa-f]{1,8})(?:;[\t\x20-\x7e\x80-\xff]*)?$/;

/** The body's length, or how it ends: with a chunk of size 0, or with the connection. */
type Head = Omit<Answer, "body"> & { framing: number | "chunked" | "close"; persistent: boolean };

/**
 * `more(chunk)` gives the answer once `chunk` completes it, `closed()` when the connection's end does (a
 * body framed by the close); each undefined until then.
 */
export function readAnswer() {
  let bytes = Buffer.alloc(0) as Buffer;
  let head: Head | undefined;
  /** Bytes of a chunked body already decoded and let go: with `bytes`, what MAX_ANSWER_BYTES bounds. */
  let decoded = 0;
  let decodeChunks: ReturnType<typeof chunkedBody> | undefined;
  // Bytes after the answer are no answer to anything: the connection is out of step, as node:http finds.
  const whole = (body: Buffer, end: number): ReadAnswer | undefined => {
    if (end < bytes.length) throw malformed("bytes after the answer");
    return head && { status: head.status, headers: head.headers, body, keepAlive: head.persistent };
  };
  return {
    more(chunk: Buffer): ReadAnswer | undefined {
      bytes = bytes.length === 0 ? chunk : Buffer.concat([bytes, chunk]);
      for (let end = bytes.indexOf("\r\n\r\n"); head === undefined; end = bytes.indexOf("\r\n\r\n")) {
        if (end < 0 || end > MAX_HEAD_BYTES) {
          if (bytes.length > MAX_HEAD_BYTES) throw malformed("head too long");
          return undefined;
        }
        const read = readHead(bytes.toString("latin1", 0, end));
        bytes = bytes.subarray(end + 4);
        // 1xx: an interim answer (RFC 9110 §15.2); the final one follows.
        if (read.status > 199) head = read;
      }
      // Framing included: a size line or trailer section that never ends is refused as well.
      if (decoded + bytes.length > MAX_ANSWER_BYTES) throw new Error(`answer over ${MAX_ANSWER_BYTES} bytes`);
      const { framing } = head;
      if (framing === "chunked") {
        decodeChunks ??= chunkedBody();
        const { used, body } = decodeChunks(bytes);
        decoded += used;
        bytes = bytes.subarray(used);
        return body && whole(body, 0);
      }
      return framing === "close" || bytes.length < framing
        ? undefined
        : whole(bytes.subarray(0, framing), framing);
    },
    closed: (): ReadAnswer | undefined =>
      head?.framing === "close" ? whole(bytes, bytes.length) : undefined,
  };
}

/** The status line and header fields; the body's framing as RFC 9112 §6.3 orders it. */
function readHead(text: string): Head {
  let lineEnd = text.indexOf("\r\n");
  const [, minorVersion, code] = STATUS_LINE.exec(lineEnd < 0 ? text : text.slice(0, lineEnd)) ?? [];
  const status = Number(code);
  if (!code || status < 100 || status === 101) throw malformed("status line");
  // No prototype: a field named like one of Object's members (`constructor`, `__proto__`) is a field.
  const headers: Record<string, string> = Object.create(null);
  for (let at = lineEnd + 2; lineEnd >= 0; at = lineEnd + 2) {
    lineEnd = text.indexOf("\r\n", at);
    const [, name = "", value = ""] = FIELD.exec(text.slice(at, lineEnd < 0 ? text.length : lineEnd)) ?? [];
    const key = name.toLowerCase();
    if (!name || (key === "content-length" && key in headers)) throw malformed(`field ${key}`);
    const trimmed = withoutOptionalWhitespace(value);
    headers[key] = key in headers ? `${headers[key]}, ${trimmed}` : trimmed;
  }
  // RFC 9110 §5.6.1: a list's empty elements are ignored; its tokens are case-insensitive.
  const coding = commaList(headers["transfer-encoding"]).pop()?.toLowerCase();
  const length = headers["content-length"];
  const closes = commaList(headers.connection).some((token) => token.toLowerCase() === "close");
  let persistent = minorVersion === "1" && !closes;
  let framing: Head["framing"] = "close";
  if (status < 200 || status === 204 || status === 304) framing = 0;
  else if (coding !== undefined && length !== undefined) throw malformed("framing");
  else if (coding === "chunked") framing = coding;
  else if (coding === undefined && length !== undefined) {
    if (!/^\d{1,7}$/.test(length)) throw malformed("field content-length");
    framing = Number(length);
  } else persistent = false;
  return { status, headers, framing, persistent };
}

/**
 * A chunked body (RFC 9112 §7.1) decoded as its bytes come: chunks, each its size in hex (extensions
 * ignored), its bytes and a CRLF, up to one of size 0, then trailer fields, checked and dropped. Each call
 * takes the bytes not yet decoded and says how many it decoded, so that no byte is read twice but a
 * chunk's size line, and gives the body once it is whole.
 */
function chunkedBody() {
  const chunks: Buffer[] = [];
  let inTrailers = false;
  return (bytes: Buffer): { used: number; body?: Buffer } => {
    let used = 0;
    for (let line = bytes.indexOf("\r\n"); line >= 0; line = bytes.indexOf("\r\n", used)) {
      const text = bytes.toString("latin1", used, line);
      const start = line + 2;
      if (inTrailers) {
        used = start;
        if (!text) return { used, body: Buffer.concat(chunks) };
        if (!FIELD.test(text)) throw malformed("trailer field");
        continue;
      }
      const [, hex] = CHUNK_SIZE.exec(text) ?? [];
      if (hex === undefined) throw malformed("chunk size");
      const size = Number.parseInt(hex, 16);
      if (size === 0) {
        inTrailers = true;
        used = start;
        continue;
      }
      // A chunk not all here waits for the rest; its size line is read again then.
      if (bytes.length < start + size + 2) break;
      if (bytes.toString("latin1", start + size, start + size + 2) !== "\r\n") throw malformed("chunk");
      chunks.push(bytes.subarray(start, start + size));
      used = start + size + 2;
    }
    return { used };
  };
}

const malformed = (part: string) => new Error(`the answer is not HTTP/1.1: ${part}`);
