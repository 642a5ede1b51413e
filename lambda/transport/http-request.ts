import type { Agent, IncomingMessage } from "node:http";

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
  body: Buffer;
}

/** An answer larger than this is not one of DynamoDB's or a JWKS: refuse it rather than buffer it. */
const MAX_ANSWER_BYTES = 1024 * 1024;

type Transport = { request: typeof import("node:http").request; agent: Agent };
const transports = new Map<string, Promise<Transport>>();

/**
 * One HTTP(S) request on node:http, with keep-alive connections kept for the life of the instance.
 * Not the global fetch: its first use in a process loads undici (~40 ms measured here), paid on every
 * cold start, and each later call costs about twice node:http's. The module is imported on first use,
 * so a cold start does not pay for it before the first request needs it.
 */
export async function sendRequest({
  method,
  url,
  headers,
  body,
  signal,
}: OutboundRequest): Promise<OutboundResponse> {
  const { request, agent } = await transportFor(url.protocol);
  return new Promise((resolve, reject) => {
    const outgoing = request(url, { method, headers, agent, signal }, (incoming: IncomingMessage) => {
      const chunks: Buffer[] = [];
      let size = 0;
      incoming.on("data", (chunk: Buffer) => {
        size += chunk.length;
        if (size > MAX_ANSWER_BYTES) incoming.destroy(new Error(`answer over ${MAX_ANSWER_BYTES} bytes`));
        else chunks.push(chunk);
      });
      incoming.on("end", () => resolve({ status: incoming.statusCode ?? 0, body: Buffer.concat(chunks) }));
      incoming.on("error", reject);
    });
    outgoing.on("error", reject);
    outgoing.end(body);
  });
}

function transportFor(protocol: string): Promise<Transport> {
  let transport = transports.get(protocol);
  if (transport === undefined) {
    transport = loadTransport(protocol);
    transports.set(protocol, transport);
  }
  return transport;
}

async function loadTransport(protocol: string): Promise<Transport> {
  if (protocol === "https:") {
    const https = await import("node:https");
    return { request: https.request, agent: new https.Agent({ keepAlive: true }) };
  }
  if (protocol === "http:") {
    const http = await import("node:http");
    return { request: http.request, agent: new http.Agent({ keepAlive: true }) };
  }
  throw new Error(`unsupported protocol ${protocol}`);
}
