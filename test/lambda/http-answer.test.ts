/**
 * readAnswer (lambda/transport/http-answer.ts) as bytes come in small pieces: the differential test
 * (test/hardening/http-answer-differential.test.ts) proves what it reads against node:http; this file, how
 * much reading it does, and the field names an object's prototype would shadow.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { type ReadAnswer, readAnswer } from "../../lambda/transport/http-answer.ts";

afterEach(() => {
  vi.restoreAllMocks();
});

/** Feeds `bytes` to a reader in pieces of `pieceSize`; the answer once one completes it. */
function feed(bytes: Buffer, pieceSize: number): ReadAnswer | undefined {
  const reader = readAnswer();
  let answer: ReadAnswer | undefined;
  for (let at = 0; at < bytes.length; at += pieceSize) {
    answer = reader.more(bytes.subarray(at, at + pieceSize));
  }
  return answer;
}

describe("a chunked answer of many small chunks, arriving in small pieces", () => {
  const CHUNKS = 5000;
  const head = "HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n";
  const bytes = Buffer.from(`${head}${"1\r\nx\r\n".repeat(CHUNKS)}0\r\nx-trailer: 1\r\n\r\n`, "latin1");

  it("is read whole", () => {
    const answer = feed(bytes, 64);
    expect(answer?.status).toBe(200);
    expect(answer?.body.toString()).toBe("x".repeat(CHUNKS));
  });

  it("is read once: each piece adds the work of its own chunks, not of every chunk before it", () => {
    // Each chunk's size line and closing CRLF are read as text; reading the body again from its start
    // with every piece made that about CHUNKS * pieces / 2 reads (CPU quadratic in the answer).
    const reads = vi.spyOn(Buffer.prototype, "toString");
    const pieceSize = 64;
    feed(bytes, pieceSize);
    const pieces = Math.ceil(bytes.length / pieceSize);
    expect(reads.mock.calls.length).toBeLessThan(2 * CHUNKS + 2 * pieces);
  });
});

describe("field names", () => {
  it("named like an object's own members are fields like any other", () => {
    const answer = feed(
      Buffer.from(
        "HTTP/1.1 200 OK\r\nconstructor: x\r\n__proto__: y\r\ntoString: z\r\ncontent-length: 0\r\n\r\n",
      ),
      1024,
    );
    expect(Object.entries(answer?.headers ?? {}).sort()).toEqual([
      ["__proto__", "y"],
      ["constructor", "x"],
      ["content-length", "0"],
      ["tostring", "z"],
    ]);
  });
});
