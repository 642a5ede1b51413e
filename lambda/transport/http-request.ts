import type { Socket } from "node:net";
import { type Answer, type ReadAnswer, readAnswer } from "./http-answer.ts";

/** A request this function sends (the incoming side is ApiRequest, lambda/http/api-gateway.ts). */
export interface OutboundRequest {
  method: "GET" | "POST";
  url: URL;
  /** Names in lower case; `host` and `content-length` are added when missing. */
  headers: Record<string, string>;
  body?: string;
  signal: AbortSignal;
}

export interface OutboundResponse extends Answer {
  /**
   * The request was sent a second time after a stale connection (see sendRequest): the first may have
   * reached the server too.
   */
  resent: boolean;
}

/**
 * No answer came. `requestSent` is false only when the request never reached an open connection (refused,
 * unreachable, timed out while connecting): then the server cannot have acted on it.
 */
export class NoAnswerError extends Error {
  override name = "NoAnswerError";
  constructor(
    readonly requestSent: boolean,
    cause: unknown,
  ) {
    super(String(cause), { cause });
  }
}

/** A reused connection, or one opened ahead, closed or reset before any byte of the answer came. */
class StaleConnectionError extends NoAnswerError {}

/** What a connection says goes to the exchange under way on it; with none, the connection is dropped. */
interface Exchange {
  data(chunk: Buffer): void;
  end(): void;
  fail(error?: unknown): void;
}

/** A connection to an origin: its socket, whether it is open yet, and the exchange under way on it. */
interface Connection {
  socket: Socket;
  origin: string;
  /** TCP connected (TLS done for https:): a request written on it may have reached the server. */
  open: boolean;
  exchange: Exchange | undefined;
}

/**
 * By origin, the connections waiting for a request: opened ahead (openConnection) or kept alive after an
 * answer, the last kept taken first, as node:http's agent does. While one waits it does not keep the
 * process up, and one that fails, closes or says anything unasked is dropped.
 */
const waiting = new Map<string, Connection[]>();
/** By origin, the last TLS session, so that a new connection resumes it instead of a full handshake. */
const tlsSessions = new Map<string, Buffer>();

/**
 * One HTTP/1.1 request on a kept-alive connection of its own pool, written in one piece and its answer
 * read by readAnswer (http-answer.ts). Not node:http: its request and response objects, agent and
 * parser cost a warm create about a third of its CPU, and its modules a cold start their load
 * (docs/DESIGN.md). Not the global fetch either: its first use loads undici (~40 ms). A kept-alive
 * connection can be closed by the server just as it is reused: one that waited (reused, or opened ahead)
 * and closes before any byte of the answer has the request sent once more on a new connection, as Node's
 * documentation of `request.reusedSocket` advises.
 */
export async function sendRequest(request: OutboundRequest): Promise<OutboundResponse> {
  const head = requestHead(request);
  const origin = request.url.origin;
  const connection = waiting.get(origin)?.pop();
  try {
    connection?.socket.ref();
    return await exchange(
      request,
      head,
      connection ?? connect(request.url, origin),
      connection !== undefined,
    );
  } catch (error) {
    if (!(error instanceof StaleConnectionError)) throw error;
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
 * Opens a connection to `url`'s origin (TCP, and TLS for https:) without sending anything, for the next
 * request there: a cold start's first request then finds its connection open, or opening. It is started
 * before this returns; resolves once it is open. Never rejects; a connection that fails is not used.
 */
export async function openConnection(url: URL, signal: AbortSignal): Promise<void> {
  const connection = connect(url, url.origin);
  const { socket } = connection;
  keep(connection);
  // Until it is open, it keeps the process up, as the request it is for would.
  socket.ref();
  await new Promise<void>((resolve) => {
    const giveUp = () => connection.open || drop(connection);
    const settle = () => {
      signal.removeEventListener("abort", giveUp);
      if (waiting.get(connection.origin)?.includes(connection)) socket.unref();
      resolve();
    };
    socket.once(url.protocol === "https:" ? "secureConnect" : "connect", settle).once("close", settle);
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
 * byte of the answer is stale; any other failure is no answer, sent unless the connection never opened.
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
      if (answer)
        return resolve({ status: answer.status, headers: answer.headers, body: answer.body, resent: false });
      const sent = received || connection.open;
      const stale = waited && sent && !received && !signal.aborted;
      reject(new (stale ? StaleConnectionError : NoAnswerError)(sent, failure));
    };
    const abort = () => finish(undefined, signal.reason);
    if (signal.aborted) return abort();
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
      end: () => finish(read.closed(), new Error("the connection closed before the answer ended")),
      fail: (error) => finish(undefined, error ?? new Error("the connection closed before the answer ended")),
    };
    signal.addEventListener("abort", abort, { once: true });
    connection.socket.write(body === undefined ? head : head + body);
  });
}

/** Keeps `connection` waiting for the next request to its origin. */
function keep(connection: Connection): void {
  const list = waiting.get(connection.origin) ?? [];
  waiting.set(connection.origin, list);
  list.push(connection);
  connection.socket.unref();
}

/** A connection that failed, closed or spoke while waiting: out of the pool, and closed. */
function drop(connection: Connection): void {
  const list = waiting.get(connection.origin) ?? [];
  if (list.includes(connection)) list.splice(list.indexOf(connection), 1);
  connection.socket.destroy();
}

/** A new connection, TCP or TLS: node:net or node:tls loaded at first use, synchronously. */
function connect(url: URL, origin: string): Connection {
  const host = url.hostname.startsWith("[") ? url.hostname.slice(1, -1) : url.hostname;
  const secure = url.protocol === "https:";
  if (!secure && url.protocol !== "http:") throw new Error(`unsupported protocol ${url.protocol}`);
  const socket = secure
    ? process.getBuiltinModule("node:tls").connect({
        host,
        port: Number(url.port) || 443,
        // TLS's server name: the host, unless it is an IP address, which SNI does not carry.
        servername: /^[\d.]+$/.test(host) || host.includes(":") ? undefined : host,
        session: tlsSessions.get(origin),
      })
    : process.getBuiltinModule("node:net").connect({ host, port: Number(url.port) || 80 });
  const connection: Connection = { socket, origin, open: false, exchange: undefined };
  if (secure) socket.on("session", (session: Buffer) => tlsSessions.set(origin, session));
  socket.setNoDelay(true).once(secure ? "secureConnect" : "connect", () => {
    connection.open = true;
  });
  // Listened to once for the connection's life: each exchange takes what it says in turn.
  socket
    .on("data", (chunk: Buffer) => (connection.exchange ? connection.exchange.data(chunk) : drop(connection)))
    .on("end", () => (connection.exchange ? connection.exchange.end() : drop(connection)))
    .on("error", (error) => (connection.exchange ? connection.exchange.fail(error) : drop(connection)))
    .on("close", () => (connection.exchange ? connection.exchange.fail() : drop(connection)));
  return connection;
}
