/**
 * The function's HTTP/1.1 answer reader (lambda/transport/http-answer.ts) against node:http's parser
 * (llhttp), differentially, on answers generated from a seed: a loopback server writes the same bytes to
 * node:http's client and, cut at random places, they are fed to readAnswer. Status, header fields (names
 * lower-cased, the values of a repeated name joined with ", ") and body must agree, or both must refuse
 * the answer. Generated: status lines with and without a reason, interim 1xx answers before the final one,
 * header fields with spaces and tabs around their values and repeated names, bodies framed by
 * Content-Length, by chunks (extensions, trailers, hex in either case) or by the connection's close, no
 * body for 204 and 304 whatever their framing says; and answers broken in one of the ways node:http refuses.
 * Known differences, not generated: a status below 100 or an HTTP version other than 1.0 and 1.1, which
 * node:http reads and readAnswer refuses (no server of this function's sends them).
 * `npm run fuzz` runs a larger corpus; FUZZ_SEED explores another one.
 */
import { request } from "node:http";
import { type AddressInfo, createServer, type Server } from "node:net";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { type Answer, readAnswer } from "../../lambda/transport/http-answer.ts";
import { fuzzRuns, fuzzTimeoutMs } from "../support/fuzz.ts";

const SEED = Number(process.env.FUZZ_SEED ?? 30_2026);
const RUNS = fuzzRuns(300, 0.02);

type Read = { answer: Answer } | { refused: true };

interface Scenario {
  /** The answer's bytes, as written. */
  bytes: Buffer;
  /** Where readAnswer's chunks are cut. */
  cuts: number[];
  /** Whether the server closes the connection after writing (a body framed by the close needs it). */
  closes: boolean;
}

// ---- The answers -----------------------------------------------------------------------------------

const TOKEN_CHARS = "!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
const fieldName = fc.oneof(
  fc
    .string({ unit: fc.constantFrom(...TOKEN_CHARS), minLength: 1, maxLength: 12 })
    .filter((name) => !["content-length", "transfer-encoding", "connection"].includes(name.toLowerCase())),
  // Names that recur, in either case: a repeated field's values are joined.
  fc.constantFrom("x-amzn-RequestId", "x-amzn-requestid", "Vary", "vary"),
);
const valueChar = fc.oneof(
  { weight: 8, arbitrary: fc.integer({ min: 0x21, max: 0x7e }).map((code) => String.fromCharCode(code)) },
  { weight: 1, arbitrary: fc.constantFrom(" ", "\t") },
  { weight: 1, arbitrary: fc.integer({ min: 0x80, max: 0xff }).map((code) => String.fromCharCode(code)) },
);
const fieldValue = fc.string({ unit: valueChar, maxLength: 20 });
const whitespace = fc.string({ unit: fc.constantFrom(" ", "\t"), maxLength: 2 });
const field = fc
  .tuple(fieldName, whitespace, fieldValue, whitespace)
  .map(([name, before, value, after]) => `${name}:${before}${value}${after}`);
const reason = fc.option(fc.string({ unit: valueChar, maxLength: 12 }), { nil: undefined });
const statusLine = (status: number, minor: 0 | 1, text: string | undefined) =>
  `HTTP/1.${minor} ${status}${text === undefined ? "" : ` ${text}`}`;

const body = fc.uint8Array({ maxLength: 300 }).map((bytes) => Buffer.from(bytes));
const chunkSizes = fc.array(fc.integer({ min: 1, max: 80 }), { maxLength: 6 });
const chunkExtension = fc.constantFrom("", ";a", ";name=value", ';q="quoted value"');

/** A body in chunks: each size in hex, lower or upper case, maybe with an extension; then trailers. */
const chunked = fc
  .tuple(body, chunkSizes, fc.boolean(), chunkExtension, fc.array(field, { maxLength: 2 }))
  .map(([bytes, sizes, upper, extension, trailers]) => {
    const parts: Buffer[] = [];
    let at = 0;
    for (const size of [...sizes, bytes.length]) {
      const chunk = bytes.subarray(at, at + size);
      if (chunk.length === 0) break;
      const hex = chunk.length.toString(16);
      parts.push(
        Buffer.from(`${upper ? hex.toUpperCase() : hex}${extension}\r\n`),
        chunk,
        Buffer.from("\r\n"),
      );
      at += chunk.length;
    }
    parts.push(Buffer.from(`0\r\n${trailers.map((line) => `${line}\r\n`).join("")}\r\n`, "latin1"));
    return { framing: "transfer-encoding: chunked", encoded: Buffer.concat(parts) };
  });
const framedBody = fc.oneof(
  body.map((bytes) => ({ framing: `content-length: ${bytes.length}`, encoded: bytes, closes: false })),
  chunked.map((answer) => ({ ...answer, closes: false })),
  body.map((bytes) => ({ framing: undefined, encoded: bytes, closes: true })),
);

const interim = fc.oneof(
  fc.constant(""),
  fc.constant("HTTP/1.1 100 Continue\r\n\r\n"),
  fc.array(field, { maxLength: 2 }).map((fields) => `HTTP/1.1 103 Early Hints\r\n${lines(fields)}\r\n`),
);

function lines(fields: string[]): string {
  return fields.map((line) => `${line}\r\n`).join("");
}

const wellFormed: fc.Arbitrary<Omit<Scenario, "cuts">> = fc
  .tuple(
    interim,
    fc.oneof({ weight: 4, arbitrary: fc.integer({ min: 200, max: 599 }) }, fc.constantFrom(204, 304)),
    fc.constantFrom<0 | 1>(0, 1, 1),
    reason,
    fc.array(field, { maxLength: 5 }),
    fc.constantFrom(undefined, "keep-alive", "close"),
    framedBody,
  )
  .map(([early, status, minor, text, fields, connection, { framing, encoded, closes }]) => {
    const noBody = status === 204 || status === 304;
    const headerLines = [...fields];
    if (connection !== undefined) headerLines.push(`connection: ${connection}`);
    // A 204 or 304 has no body, whatever its framing says.
    if (framing !== undefined) headerLines.push(framing);
    const head = `${early}${statusLine(status, minor, text)}\r\n${lines(headerLines)}\r\n`;
    return {
      bytes: Buffer.concat([Buffer.from(head, "latin1"), noBody ? Buffer.alloc(0) : encoded]),
      closes: noBody ? false : closes,
    };
  });

/** Answers node:http refuses, each broken in one place. */
const BROKEN = [
  "HTTP/1.1 2OO OK\r\ncontent-length: 0\r\n\r\n",
  "HTTP/1.1 200 OK\r\ncontent-length: 5a\r\n\r\nhello",
  "HTTP/1.1 200 OK\r\ncontent-length: +5\r\n\r\nhello",
  "HTTP/1.1 200 OK\r\ncontent-length: 5, 5\r\n\r\nhello",
  "HTTP/1.1 200 OK\r\ncontent-length: 5\r\ncontent-length: 5\r\n\r\nhello",
  "HTTP/1.1 200 OK\r\ncontent-length: 5\r\ntransfer-encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
  "HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\nzz\r\nhello\r\n0\r\n\r\n",
  "HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n5 \r\nhello\r\n0\r\n\r\n",
  "HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n5\r\nhelloXX0\r\n\r\n",
  "HTTP/1.1 200 OK\r\nbad name: x\r\ncontent-length: 0\r\n\r\n",
  "HTTP/1.1 200 OK\r\nbad : x\r\ncontent-length: 0\r\n\r\n",
  "HTTP/1.1 200 OK\r\n: x\r\ncontent-length: 0\r\n\r\n",
  "HTTP/1.1 200 OK\r\nx: a\x01b\r\ncontent-length: 0\r\n\r\n",
  "HTTP/1.1 200 OK\r\nx: a\x7fb\r\ncontent-length: 0\r\n\r\n",
  "HTTP/1.1 200 OK\r\nx: a\r\n folded\r\ncontent-length: 0\r\n\r\n",
  "HTTP/1.1 200 OK\ncontent-length: 2\n\nhi",
  "HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nhiXX",
  "HTTP/1.1 200 OK\r\ncontent-length: 10\r\n\r\ncut short",
  "HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n5\r\nhel",
];
const broken = fc
  .constantFrom(...BROKEN)
  .map((text) => ({ bytes: Buffer.from(text, "latin1"), closes: true }));

const scenario: fc.Arbitrary<Scenario> = fc
  .oneof({ weight: 6, arbitrary: wellFormed }, { weight: 1, arbitrary: broken })
  .chain((answer) =>
    fc
      .uniqueArray(fc.integer({ min: 1, max: Math.max(1, answer.bytes.length - 1) }), { maxLength: 6 })
      .map((cuts) => ({ ...answer, cuts: cuts.sort((a, b) => a - b) })),
  );

// ---- The two readers ----------------------------------------------------------------------------------

/** readAnswer fed the bytes in pieces; at the end, the close when the server closes. */
function readWithReadAnswer({ bytes, cuts, closes }: Scenario): Read {
  const reader = readAnswer();
  try {
    let at = 0;
    for (const cut of [...cuts, bytes.length]) {
      const answer = reader.more(bytes.subarray(at, cut));
      at = cut;
      if (answer !== undefined) return at === bytes.length ? { answer } : { refused: true };
    }
    const answer = closes ? reader.closed() : undefined;
    return answer === undefined ? { refused: true } : { answer };
  } catch {
    return { refused: true };
  }
}

let server: Server;
let current: Scenario | undefined;

beforeAll(async () => {
  server = createServer((socket) => {
    socket.on("error", () => undefined);
    socket.once("data", () => {
      const scenario = current;
      if (scenario === undefined) return socket.destroy();
      socket.write(scenario.bytes);
      if (scenario.closes) socket.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
});

afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

/** node:http's client on a connection of its own; an answer not whole within 5 s (none is) is refused. */
function readWithNodeHttp(subject: Scenario): Promise<Read> {
  current = subject;
  const { port } = server.address() as AddressInfo;
  return new Promise((resolve) => {
    const outgoing = request({ host: "127.0.0.1", port, agent: false }, (incoming) => {
      const chunks: Buffer[] = [];
      incoming.on("data", (chunk: Buffer) => chunks.push(chunk));
      incoming.on("end", () => {
        const headers: Record<string, string> = {};
        for (let index = 0; index < incoming.rawHeaders.length; index += 2) {
          const name = (incoming.rawHeaders[index] ?? "").toLowerCase();
          const value = incoming.rawHeaders[index + 1] ?? "";
          headers[name] = name in headers ? `${headers[name]}, ${value}` : value;
        }
        resolve({ answer: { status: incoming.statusCode ?? 0, headers, body: Buffer.concat(chunks) } });
      });
      incoming.on("error", () => resolve({ refused: true }));
      incoming.on("aborted", () => resolve({ refused: true }));
    });
    outgoing.setTimeout(5000, () => outgoing.destroy(new Error("no whole answer")));
    outgoing.on("error", () => resolve({ refused: true }));
    outgoing.end();
  });
}

const comparable = (read: Read) =>
  "refused" in read
    ? "refused"
    : { status: read.answer.status, headers: read.answer.headers, body: read.answer.body.toString("hex") };

describe("the function's HTTP answer reader against node:http's", () => {
  test(
    "reads every answer as node:http does, in whatever pieces it comes, and refuses what it refuses",
    async () => {
      await fc.assert(
        fc.asyncProperty(scenario, async (subject) => {
          const ours = readWithReadAnswer(subject);
          const theirs = await readWithNodeHttp(subject);
          expect(comparable(ours), subject.bytes.toString("latin1")).toEqual(comparable(theirs));
        }),
        { seed: SEED, numRuns: RUNS },
      );
    },
    fuzzTimeoutMs(RUNS, 30),
  );

  test("the generator makes what it says: bodies of every framing, interim answers, broken answers", () => {
    const samples = fc.sample(scenario, { seed: SEED, numRuns: 400 }).map((subject) => ({
      text: subject.bytes.toString("latin1"),
      read: readWithReadAnswer(subject),
    }));
    const share = (predicate: (sample: (typeof samples)[number]) => boolean) =>
      samples.filter(predicate).length;
    expect(share(({ text }) => /transfer-encoding: chunked\r\n/.test(text))).toBeGreaterThan(20);
    expect(share(({ text }) => /content-length: \d+\r\n/.test(text))).toBeGreaterThan(20);
    expect(share(({ text }) => !/content-length|transfer-encoding/.test(text))).toBeGreaterThan(20);
    expect(share(({ text }) => text.startsWith("HTTP/1.1 10"))).toBeGreaterThan(20);
    expect(share(({ read }) => "refused" in read)).toBeGreaterThan(20);
    expect(share(({ read }) => "answer" in read && read.answer.body.length > 0)).toBeGreaterThan(100);
  });
});
