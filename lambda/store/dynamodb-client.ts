import type { IncomingMessage } from "node:http";
import * as https from "node:https";
import type { Socket } from "node:net";
import aws4 from "aws4";
import { timed } from "../call-timings.ts";
import { isObject } from "../is-object.ts";

/** Who signs the calls, and for which region. */
export interface DynamoDbIdentity {
  region: string;
  credentials: { accessKeyId: string; secretAccessKey: string; sessionToken?: string | undefined };
}

export interface DynamoDbClientSettings extends DynamoDbIdentity {
  /** e.g. `https://dynamodb.eu-west-1.amazonaws.com`, or a local `http://` endpoint. */
  endpoint: string;
}

/** DynamoDB answered, with an error: its `__type` (without the namespace) says what went wrong. */
export class DynamoDbError extends Error {
  override name = "DynamoDbError";
  constructor(
    readonly type: string,
    readonly status: number,
    readonly body: Record<string, unknown>,
  ) {
    super(
      `DynamoDB answered ${status} ${type}${typeof body.message === "string" ? `: ${body.message}` : ""}`,
    );
  }
}

/**
 * No usable answer: no connection, a reset, a timeout, or a body that is not a JSON object (a proxy's page,
 * a truncated answer). Worth another try. `requestSent` is false only when no open connection had the call.
 */
export class TransientDynamoDbError extends Error {
  override name = "TransientDynamoDbError";
  readonly requestSent: boolean;
  constructor(message: string, options: ErrorOptions & { requestSent?: boolean } = {}) {
    super(message, options);
    this.requestSent = options.requestSent ?? true;
  }
}

/** Any answer DynamoDB gave, as status and decoded body (error answers included). */
export interface DynamoDbAnswer {
  status: number;
  body: Record<string, unknown>;
}

export interface DynamoDbClient {
  /** One call; resolves with every answer that is a JSON object, 2xx or not. */
  send(operation: string, input: object, signal: AbortSignal): Promise<DynamoDbAnswer>;
  /** One call; a non-2xx answer becomes a DynamoDbError. */
  call(operation: string, input: object, signal: AbortSignal): Promise<Record<string, unknown>>;
  /**
   * Opens a connection to the endpoint (TLS handshake included), sending nothing on it, for the next call
   * to take, unless `signal` aborts first. Never rejects: a failed warm-up only means the call connects.
   */
  prewarm(signal: AbortSignal): Promise<void>;
}

const JSON_1_0 = "application/x-amz-json-1.0";

/** The headers of a signed DynamoDB JSON-protocol call, names in lower case: signed by aws4 (SigV4). */
export function signedDynamoDbHeaders(
  endpoint: URL,
  identity: DynamoDbIdentity,
  operation: string,
  payload: string,
): Record<string, string> {
  const { headers = {} } = aws4.sign(
    {
      host: endpoint.host,
      path: `${endpoint.pathname}${endpoint.search}`,
      method: "POST",
      service: "dynamodb",
      region: identity.region,
      body: payload,
      headers: { "content-type": JSON_1_0, "x-amz-target": `DynamoDB_20120810.${operation}` },
    },
    identity.credentials,
  );
  const signed: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) signed[name.toLowerCase()] = String(value);
  return signed;
}

/**
 * DynamoDB's JSON protocol, signed per call, over node:http(s) with a keep-alive Agent of the client's own,
 * which also takes the connection prewarm opened as its first.
 */
export function createDynamoDbClient(settings: DynamoDbClientSettings): DynamoDbClient {
  const endpoint = new URL(settings.endpoint);
  const secure = endpoint.protocol === "https:";
  // node:http only for an http:// endpoint (dynalite), and not by an import: the ES module facade of
  // node:http reads every export, one of which loads undici (about 15 ms of every cold start).
  const transport = secure ? https : process.getBuiltinModule("node:http");
  const agent = new transport.Agent({ keepAlive: true });
  const connectEvent = secure ? "secureConnect" : "connect";
  /** Sockets whose connection (and TLS handshake) completed: a call written to one may have arrived. */
  const open = new WeakSet<Socket>();
  let ahead: Socket | undefined;
  const openSocket = agent.createConnection.bind(agent) as (options: object, done?: unknown) => Socket;
  agent.createConnection = (options, done) => {
    const socket = ahead?.destroyed === false ? ahead.ref() : openSocket(options, done);
    ahead = undefined;
    if (!open.has(socket)) socket.once(connectEvent, () => open.add(socket));
    return socket;
  };

  const exchange = (operation: string, input: object, signal: AbortSignal) =>
    new Promise<DynamoDbAnswer>((resolve, reject) => {
      const payload = JSON.stringify(input);
      // A signing failure rejects as itself: a bug (a 500), not a fault of DynamoDB's to retry.
      const headers = signedDynamoDbHeaders(endpoint, settings, operation, payload);
      const request = transport.request(endpoint, { method: "POST", headers, agent, signal });
      // Sent once its connection was open: a call on a kept one that the server had closed, reset, may
      // have been received too.
      const fail = (error: unknown) =>
        reject(
          new TransientDynamoDbError(`${operation} failed: ${(error as Error).message}`, {
            cause: error,
            requestSent: request.socket !== null && open.has(request.socket),
          }),
        );
      request.on("error", fail);
      request.on("response", (response: IncomingMessage) => {
        const chunks: Buffer[] = [];
        response.on("data", (chunk: Buffer) => chunks.push(chunk));
        response.on("error", fail);
        response.on("close", () => {
          if (!response.complete) return fail(new Error("the connection closed before the answer ended"));
          try {
            resolve({ status: response.statusCode ?? 0, body: decodeBody(operation, response, chunks) });
          } catch (error) {
            reject(error);
          }
        });
      });
      request.end(payload);
    });
  const send = (operation: string, input: object, signal: AbortSignal) =>
    timed("storeMs", () => exchange(operation, input, signal));

  return {
    send,
    async call(operation, input, signal) {
      const { status, body } = await send(operation, input, signal);
      if (status >= 200 && status < 300) return body;
      throw new DynamoDbError(errorType(body), status, body);
    },
    prewarm(signal) {
      const host = endpoint.hostname.replace(/^\[|\]$/g, "");
      const port = Number(endpoint.port) || (secure ? 443 : 80);
      // TLS's server name: the host, unless it is an IP address, which SNI does not carry.
      const servername = /^[\d.]+$|:/.test(host) ? undefined : host;
      const socket = openSocket({ host, port, servername });
      ahead = socket;
      return new Promise((resolve) => {
        const settle = () => {
          signal.removeEventListener("abort", giveUp);
          // Waiting, it keeps the process up no more than an idle kept connection does.
          if (ahead === socket) socket.unref();
          resolve();
        };
        // A call that took the connection while it opened is the one to end it, by its own signal.
        const giveUp = () => (ahead === socket ? socket.destroy() : settle());
        socket.once(connectEvent, () => {
          open.add(socket);
          settle();
        });
        socket.once("close", settle).once("error", () => socket.destroy());
        if (signal.aborted) giveUp();
        else signal.addEventListener("abort", giveUp, { once: true });
      });
    },
  };
}

/**
 * The error type of a non-2xx answer's body (its `__type` without the namespace); DynamoDB's are a few
 * dozen characters, and a proxy's longer one is cut, so that no log line grows with it.
 */
function errorType({ __type, code }: Record<string, unknown>): string {
  const type =
    String(__type ?? code ?? "UnknownError")
      .split("#")
      .pop() || "UnknownError";
  return type.slice(0, 100);
}

function decodeBody(
  operation: string,
  { statusCode }: IncomingMessage,
  chunks: Buffer[],
): Record<string, unknown> {
  let decoded: unknown;
  try {
    decoded = JSON.parse(Buffer.concat(chunks).toString("utf8"));
  } catch {
    throw new TransientDynamoDbError(`${operation} answered ${statusCode} with a body that is not JSON`);
  }
  // `null`, a string or a list (a proxy's answer, not DynamoDB's) is as unreadable as no JSON.
  if (!isObject(decoded)) {
    throw new TransientDynamoDbError(`${operation} answered ${statusCode} with a body that is not an object`);
  }
  return decoded;
}
