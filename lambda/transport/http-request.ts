import type { Agent, ClientRequest, IncomingHttpHeaders, IncomingMessage } from "node:http";
import type { Socket } from "node:net";
import { type ConnectionsAhead, connectionsAhead } from "./connections-ahead.ts";

/** A request this function sends (the incoming side is ApiRequest, lambda/http/api-gateway.ts). */
export interface OutboundRequest {
  method: "GET" | "POST";
  url: URL;
  headers: Record<string, string>;
  body?: string;
  signal: AbortSignal;
}

export interface OutboundResponse {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
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

/** An answer larger than this is not one of DynamoDB's or a JWKS: refuse it rather than buffer it. */
const MAX_ANSWER_BYTES = 1024 * 1024;

type Transport = {
  request: typeof import("node:http").request;
  agent: Agent;
  ahead: ConnectionsAhead;
};
const transports = new Map<string, Transport>();

/**
 * One HTTP(S) request on node:http (loaded at first use), keep-alive connections kept for the instance's
 * life. Not the global fetch: its first use loads undici (~40 ms), and each call costs twice node:http's.
 * A kept-alive connection can be closed by the server just as it is reused: a reset on a reused connection,
 * or one opened ahead (openConnection), before any byte of the answer, is sent once more on a new
 * connection, as Node's documentation of `request.reusedSocket` advises.
 */
export async function sendRequest(request: OutboundRequest): Promise<OutboundResponse> {
  const transport = transportFor(request.url.protocol);
  try {
    return await sendOnce(transport, request);
  } catch (error) {
    if (!(error instanceof StaleConnectionError)) throw error;
  }
  // Its idle siblings are as old, and as likely closed: none is reused for the second try.
  for (const sockets of Object.values(transport.agent.freeSockets))
    for (const s of sockets ?? []) s.destroy();
  try {
    return { ...(await sendOnce(transport, request)), resent: true };
  } catch (error) {
    // The first request may have reached the server, whatever became of the second.
    throw error instanceof NoAnswerError && !error.requestSent ? new NoAnswerError(true, error.cause) : error;
  }
}

/** A reused connection, or one opened ahead, reset before any byte of the answer came. */
class StaleConnectionError extends NoAnswerError {}

function sendOnce(
  { request, agent, ahead }: Transport,
  { method, url, headers, body, signal }: OutboundRequest,
) {
  return new Promise<OutboundResponse>((resolve, reject) => {
    let connected = false;
    let answerBytesBefore = 0;
    let connection: Socket | undefined;
    const outgoing: ClientRequest = request(
      url,
      { method, headers, agent, signal },
      (incoming: IncomingMessage) => {
        const chunks: Buffer[] = [];
        let size = 0;
        incoming.on("data", (chunk: Buffer) => {
          size += chunk.length;
          if (size > MAX_ANSWER_BYTES) incoming.destroy(new Error(`answer over ${MAX_ANSWER_BYTES} bytes`));
          else chunks.push(chunk);
        });
        incoming.on("end", () =>
          resolve({
            status: incoming.statusCode ?? 0,
            headers: incoming.headers,
            body: Buffer.concat(chunks),
            resent: false,
          }),
        );
        incoming.on("error", (error) => reject(new NoAnswerError(true, error)));
      },
    );
    outgoing.on("socket", (socket: Socket) => {
      connection = socket;
      answerBytesBefore = socket.bytesRead;
      if (socket.connecting) socket.once("connect", () => (connected = true));
      else connected = true;
    });
    outgoing.on("error", (error: Error & { code?: string }) => {
      const idleBefore =
        outgoing.reusedSocket || (connection !== undefined && ahead.wasOpenedAhead(connection));
      const stale =
        idleBefore &&
        !signal.aborted &&
        (error.code === "ECONNRESET" || error.code === "EPIPE") &&
        connection?.bytesRead === answerBytesBefore;
      reject(stale ? new StaleConnectionError(true, error) : new NoAnswerError(connected, error));
    });
    outgoing.end(body);
  });
}

/**
 * Opens a connection to `url`'s origin (TCP, and TLS for https:) without sending anything, for the next
 * request there that would open one: a cold start's first request then finds its connection open. It is
 * started before this returns; resolves once it is open. Never rejects; a connection that fails is not used.
 */
export async function openConnection(url: URL, signal: AbortSignal): Promise<void> {
  await transportFor(url.protocol).ahead.open(url, signal);
}

function transportFor(protocol: string): Transport {
  let transport = transports.get(protocol);
  if (transport === undefined) {
    transport = loadTransport(protocol);
    transports.set(protocol, transport);
  }
  return transport;
}

/** node:https or node:http, loaded at first use, synchronously: an init that opens a connection does it at once. */
function loadTransport(protocol: string): Transport {
  if (protocol === "https:") {
    const https = process.getBuiltinModule("node:https");
    const agent = new https.Agent({ keepAlive: true });
    return { request: https.request, agent, ahead: connectionsAhead(agent, 443) };
  }
  if (protocol === "http:") {
    const http = process.getBuiltinModule("node:http");
    const agent = new http.Agent({ keepAlive: true });
    return { request: http.request, agent, ahead: connectionsAhead(agent, 80) };
  }
  throw new Error(`unsupported protocol ${protocol}`);
}
