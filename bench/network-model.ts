/**
 * A remote HTTPS endpoint, modelled on loopback: a TCP proxy that delays each direction by half a
 * round-trip time (RTT), in front of a TLS terminator, in front of a plain HTTP server of the project
 * (dynalite, the key-set server). So a new connection pays what it pays over a network:
 *
 *   TCP handshake (SYN, SYN-ACK)                          1 RTT
 *   TLS 1.3 handshake (ClientHello … server Finished)     1 RTT
 *   the request and its answer                            1 RTT
 *
 * 3 RTTs for a request on a new connection, 1 on an open one. Loopback accepts the connection at
 * once, so the proxy holds the client's first bytes until one RTT after accepting: the client could
 * not have sent them before the SYN-ACK reached it. Delays are timers, so each leg is off by up to
 * about half a millisecond; bandwidth, loss and congestion windows are not modelled (the messages are a few KiB).
 */
import { once } from "node:events";
import { createServer as createTcpServer, type Server, type Socket, connect as tcpConnect } from "node:net";
import { createServer as createTlsServer, type TLSSocket } from "node:tls";

export interface RemoteEndpoint {
  /** `https://127.0.0.1:<port>`: the proxy's address. */
  origin: string;
  close(): Promise<void>;
}

export interface RemoteEndpointOptions {
  /** The plain HTTP server the endpoint stands for, on 127.0.0.1. */
  upstreamPort: number;
  key: Buffer;
  cert: Buffer;
  roundTripMs: number;
}

export async function startRemoteEndpoint(options: RemoteEndpointOptions): Promise<RemoteEndpoint> {
  const sockets = new Set<Socket>();
  const track = (socket: Socket): Socket => {
    // Nagle's algorithm would hold a small write for the peer's (possibly delayed) ACK: not the model.
    socket.setNoDelay(true);
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
    return socket;
  };

  const terminator = createTlsServer({ key: options.key, cert: options.cert }, (clear: TLSSocket) => {
    track(clear);
    const upstream = track(
      tcpConnect({ port: options.upstreamPort, host: "127.0.0.1", allowHalfOpen: true }),
    );
    joinSockets(clear, upstream, 0);
  });
  const terminatorPort = await listen(terminator);

  const proxy = createTcpServer({ allowHalfOpen: true }, (client) => {
    track(client);
    const server = track(tcpConnect({ port: terminatorPort, host: "127.0.0.1", allowHalfOpen: true }));
    joinSockets(client, server, options.roundTripMs);
  });
  const proxyPort = await listen(proxy);

  return {
    origin: `https://127.0.0.1:${proxyPort}`,
    async close() {
      for (const socket of sockets) socket.destroy();
      await Promise.all([closeServer(proxy), closeServer(terminator)]);
    },
  };
}

/** Relays bytes both ways, each leg RTT/2 late; the client's first bytes wait for the TCP handshake. */
function joinSockets(client: Socket, server: Socket, roundTripMs: number): void {
  const oneWayMs = roundTripMs / 2;
  const handshakeDoneAt = performance.now() + roundTripMs;
  relay(client, server, () => Math.max(performance.now(), handshakeDoneAt) + oneWayMs);
  relay(server, client, () => performance.now() + oneWayMs);
  const fail = () => {
    client.destroy();
    server.destroy();
  };
  client.on("error", fail);
  server.on("error", fail);
}

/** Forwards `from`'s bytes and its end to `to`, each at the time `deliverAt` gives, in order. */
function relay(from: Socket, to: Socket, deliverAt: () => number): void {
  const queue: { at: number; chunk: Buffer | "end" }[] = [];
  let timer: NodeJS.Timeout | undefined;
  const deliverDue = (): void => {
    timer = undefined;
    // Timers fire on whole milliseconds: anything due within half of one goes now, so that each leg
    // is early or late by at most about half a millisecond rather than always late.
    const now = performance.now() + 0.5;
    while (queue[0] !== undefined && queue[0].at <= now) {
      const { chunk } = queue.shift() as (typeof queue)[number];
      if (to.destroyed) return;
      if (chunk === "end") to.end();
      else to.write(chunk);
    }
    if (queue[0] !== undefined) timer = setTimeout(deliverDue, queue[0].at - now);
  };
  const enqueue = (chunk: Buffer | "end"): void => {
    queue.push({ at: deliverAt(), chunk });
    if (timer === undefined) deliverDue();
  };
  from.on("data", (chunk: Buffer) => enqueue(chunk));
  from.on("end", () => enqueue("end"));
}

/** The free port of 127.0.0.1 it listens on; `once` rejects on the server's error. */
async function listen(server: Server): Promise<number> {
  await once(server.listen(0, "127.0.0.1"), "listening");
  return (server.address() as { port: number }).port;
}

function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => server.close(() => resolve()));
}
