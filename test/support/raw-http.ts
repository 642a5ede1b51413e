/**
 * HTTP requests a fetch() cannot send, for tests of the local run: a header repeated (each copy on its
 * own line), an Origin header, a body streamed in pieces, a request its sender half-closes or leaves open.
 */
import { type Agent, request as httpRequest, type OutgoingHttpHeaders } from "node:http";
import { connect } from "node:net";

export interface RawAnswer {
  /** Whether the request went on a connection an earlier request of the same agent had used. */
  reusedSocket: boolean;
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/**
 * One request; `body` is written in `pieces` writes. Resolves once the answer has been read and the whole
 * request was sent; rejects with the socket's error (a reset, EPIPE) if either did not happen, as when
 * a server answers a large body early and closes the connection while it is still coming.
 */
export function rawRequest(
  url: string,
  {
    method = "POST",
    headers = {},
    body = "",
    pieces = 1,
    agent = false,
  }: {
    /** A keep-alive agent lets a second request reuse the first one's connection; none by default. */
    agent?: Agent | false;
    method?: string;
    headers?: OutgoingHttpHeaders;
    body?: string | Buffer;
    pieces?: number;
  },
): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    let answer: RawAnswer | undefined;
    let sent = false;
    const settleIfDone = () => {
      if (answer && sent) resolve(answer);
    };
    const outgoing = httpRequest(url, { method, headers, agent }, (response) => {
      const chunks: Buffer[] = [];
      response.on("data", (chunk: Buffer) => chunks.push(chunk));
      response.once("error", reject);
      response.once("end", () => {
        answer = {
          reusedSocket: outgoing.reusedSocket,
          status: response.statusCode ?? 0,
          headers: response.headers,
          body: Buffer.concat(chunks).toString("utf8"),
        };
        settleIfDone();
      });
    });
    outgoing.once("error", reject);
    outgoing.once("finish", () => {
      sent = true;
      settleIfDone();
    });
    const bytes = Buffer.from(body);
    const size = Math.max(1, Math.ceil(bytes.length / pieces));
    for (let start = 0; start < bytes.length; start += size)
      outgoing.write(bytes.subarray(start, start + size));
    outgoing.end();
  });
}

/**
 * Sends `text` on a plain TCP connection, then half-closes it (FIN: no more to send, still reading), or
 * with `keepOpen` leaves it open, as a client still meaning to send more; resolves with all the server
 * sent back once it closes the connection, or "" if nothing.
 */
export function rawExchange(port: number, text: string, { keepOpen = false } = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1");
    let received = "";
    socket.on("data", (chunk) => {
      received += chunk;
    });
    socket.once("error", reject);
    socket.once("end", () => socket.end());
    socket.once("close", () => resolve(received));
    if (keepOpen) socket.write(text);
    else socket.end(text);
  });
}
