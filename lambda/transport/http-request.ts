import type { Socket } from "node:net";
import { type Answer, type ReadAnswer, readAnswer } from "./http-answer.ts";

/** A request this function sends; names in lower case, `host` and `content-length` added if missing. */
export interface OutboundRequest {
  method: "GET" | "POST";
  url: URL;
  headers: Record<string, string>;
  body?: string;
  signal: AbortSignal;
}

export interface OutboundResponse extends Answer {
  /** Sent a second time after a stale connection (see sendRequest): the first may have reached the server. */
  resent: boolean;
}

/**
 * No answer came; `requestSent` is false only if no open connection had it (refused, unreachable).
 * `stale`: a reused connection, or one opened ahead, closed or reset before any byte of the answer came.
 */
export class NoAnswerError extends Error {
  override name = "NoAnswerError";
  constructor(
    readonly requestSent: boolean,
    cause: unknown,
    readonly stale = false,
  ) {
    super(String(cause), { cause });
  }
}

/** A connection, open once TCP (and TLS) is; what it says goes to the exchange under way, else drops it. */
interface Connection {
  socket: Socket;
  origin: string;
  open: boolean;
  exchange: { data(chunk: Buffer): void; end(): void; fail(error?: unknown): void } | undefined;
}

/** By origin, the connections waiting for a request (the last kept taken first), and a TLS session. */
const waiting = new Map<string, Connection[]>();
const tlsSessions = new Map<string, Buffer>();

/**
 * One HTTP/1.1 request on a kept-alive connection, written in one piece, its answer read by readAnswer.
 * Not node:http, whose request and response objects, agent and parser were a third of a warm create's
 * CPU (docs/DESIGN.md); not fetch, whose first use loads undici (~40 ms). A connection that waited and
 * closes before any byte of the answer (the server's idle timeout as it is reused) has the request sent
 * once more on a new one, as Node's documentation of `request.reusedSocket` advises.
 */
export async function sendRequest(request: OutboundRequest): Promise<OutboundResponse> {
  const head = requestHead(request);
  const origin = request.url.origin;
  const waited = waiting.get(origin)?.pop();
  waited?.socket.ref();
  try {
    return await exchange(request, head, waited ?? connect(request.url, origin), waited !== undefined);
  } catch (error) {
    if (!(error instanceof NoAnswerError && error.stale)) throw error;
  }
  // Its waiting siblings are as old, and as likely closed: none is reused for the second try.
  for (const sibling of waiting.get(origin)?.splice(0) ?? []) sibling.socket.destroy();
  try {
    return { ...(await exchange(request, head, connect(request.url, origin), false)), resent: true };
  } catch (error) {
    // The first request may have reached the server, whatever became of the second.
    throw error instanceof NoAnswerError && !error.requestSent ? new NoAnswerError(true, error.cause) : error;
  }
}

/**
 * Opens a connection to `url`'s origin for the next request there (a cold start's first), sending nothing;
 * resolves once it is open, never rejects. Until it is open it keeps the process up, as a request would.
 */
export async function openConnection(url: URL, signal: AbortSignal): Promise<void> {
  const connection = keep(connect(url, url.origin));
  connection.socket.ref();
  await new Promise<void>((resolve) => {
    // A request that took the connection while it opened is the one to end it, by its own signal.
    const giveUp = () => connection.open || connection.exchange || drop(connection);
    const settle = () => {
      signal.removeEventListener("abort", giveUp);
      if (waiting.get(connection.origin)?.includes(connection)) connection.socket.unref();
      resolve();
    };
    connection.socket.once(url.protocol === "https:" ? "secureConnect" : "connect", settle);
    connection.socket.once("close", settle);
    if (signal.aborted) giveUp();
    else signal.addEventListener("abort", giveUp, { once: true });
  });
}

/** The request line and headers; a header that would end its line early is refused, as node:http does. */
function requestHead({ method, url, headers, body }: OutboundRequest): string {
  let head = `${method} ${url.pathname}${url.search} HTTP/1.1\r\n`;
  if (headers.host === undefined) head += `host: ${url.host}\r\n`;
  if (body !== undefined && headers["content-length"] === undefined) {
    head += `content-length: ${Buffer.byteLength(body)}\r\n`;
  }
  for (const name in headers) {
    const line = `${name}: ${headers[name]}`;
    if (/[\0\r\n]/.test(line)) throw new TypeError(`the header ${name} holds a line break`);
    head += `${line}\r\n`;
  }
  return `${head}\r\n`;
}

/**
 * Sends `head` and the body on `connection` and reads the answer. One that `waited` and closes before any
 * byte of the answer is stale; any other failure is no answer, sent if the connection was open.
 */
function exchange(
  { body, signal }: OutboundRequest,
  head: string,
  connection: Connection,
  waited: boolean,
): Promise<OutboundResponse> {
  return new Promise((resolve, reject) => {
    let received = false;
    const read = readAnswer();
    const finish = (answer: ReadAnswer | undefined, failure?: unknown) => {
      connection.exchange = undefined;
      signal.removeEventListener("abort", abort);
      if (answer?.keepAlive) keep(connection);
      else connection.socket.destroy();
      if (answer) {
        return resolve({ status: answer.status, headers: answer.headers, body: answer.body, resent: false });
      }
      const sent = received || connection.open;
      reject(new NoAnswerError(sent, failure, waited && sent && !received && !signal.aborted));
    };
    const abort = () => finish(undefined, signal.reason);
    if (signal.aborted) return abort();
    const closed = () => new Error("the connection closed before the answer ended");
    connection.exchange = {
      data(chunk) {
        received = true;
        try {
          const answer = read.more(chunk);
          if (answer) finish(answer);
        } catch (error) {
          finish(undefined, error);
        }
      },
      // Only the connection's end can complete an answer: one whose body ends with the connection.
      end: () => finish(read.closed(), closed()),
      fail: (error) => finish(undefined, error ?? closed()),
    };
    signal.addEventListener("abort", abort, { once: true });
    connection.socket.write(body === undefined ? head : head + body);
  });
}

function keep(connection: Connection): Connection {
  const list = waiting.get(connection.origin) ?? [];
  list.push(connection);
  waiting.set(connection.origin, list);
  connection.socket.unref();
  return connection;
}

/** A connection that failed, closed or spoke while waiting: out of the pool, and closed. */
function drop(connection: Connection): void {
  const list = waiting.get(connection.origin) ?? [];
  const at = list.indexOf(connection);
  if (at >= 0) list.splice(at, 1);
  connection.socket.destroy();
}

/** A new connection, TCP or TLS (node:net or node:tls loaded at first use), listened to once for life. */
function connect(url: URL, origin: string): Connection {
  const host = url.hostname.startsWith("[") ? url.hostname.slice(1, -1) : url.hostname;
  const secure = url.protocol === "https:";
  if (!secure && url.protocol !== "http:") throw new Error(`unsupported protocol ${url.protocol}`);
  const port = Number(url.port) || (secure ? 443 : 80);
  // TLS's server name: the host, unless it is an IP address, which SNI does not carry.
  const servername = /^[\d.]+$/.test(host) || host.includes(":") ? undefined : host;
  const socket = secure
    ? process
        .getBuiltinModule("node:tls")
        .connect({ host, port, servername, session: tlsSessions.get(origin) })
    : process.getBuiltinModule("node:net").connect({ host, port });
  const connection: Connection = { socket, origin, open: false, exchange: undefined };
  if (secure) socket.on("session", (session: Buffer) => tlsSessions.set(origin, session));
  socket.setNoDelay(true).once(secure ? "secureConnect" : "connect", () => (connection.open = true));
  socket
    .on("data", (chunk: Buffer) => (connection.exchange ? connection.exchange.data(chunk) : drop(connection)))
    .on("end", () => (connection.exchange ? connection.exchange.end() : drop(connection)))
    .on("error", (error) => (connection.exchange ? connection.exchange.fail(error) : drop(connection)))
    .on("close", () => (connection.exchange ? connection.exchange.fail() : drop(connection)));
  return connection;
}
