import type { Agent } from "node:http";
import type { Socket } from "node:net";

/**
 * Connections opened before any request needs them (a cold start's store connection, opened at init),
 * each handed to the agent for the first request to its origin that would open a new one. Once open and
 * until then, a connection does not keep the process alive; one that fails or closes is dropped unused.
 */
export interface ConnectionsAhead {
  /** Resolves once the connection is open (TLS done for https:), or failed, or given up with `signal`. */
  open(url: URL, signal: AbortSignal): Promise<void>;
  /**
   * Whether `socket` is a connection opened ahead: its first request, like a kept-alive connection's
   * next one, may find it closed by the server as it is taken, after sitting idle.
   */
  wasOpenedAhead(socket: Socket): boolean;
}

type ConnectionOptions = { host: string; port: number | string; servername?: string; keepAlive?: boolean };
type CreateConnection = (options: ConnectionOptions, callback?: unknown) => Socket;

/**
 * Wraps `agent.createConnection`, the method Node documents for custom agents to supply their
 * sockets: a connection opened ahead for the request's origin is returned instead of a new one.
 */
export function connectionsAhead(agent: Agent, defaultPort: number): ConnectionsAhead {
  /** By origin: the connection, and the listener that drops it if it fails or closes unused. */
  const waiting = new Map<string, { connection: Socket; drop: () => void }>();
  const handedOut = new WeakSet<Socket>();
  const pluggable = agent as unknown as { createConnection: CreateConnection };
  const connectNew = pluggable.createConnection.bind(agent);

  pluggable.createConnection = (options, callback) => {
    const origin = originKey(options.host, options.port);
    const ahead = waiting.get(origin);
    waiting.delete(origin);
    if (ahead === undefined || ahead.connection.destroyed) return connectNew(options, callback);
    // From here on, the request and the agent handle its errors and its close.
    ahead.connection.off("error", ahead.drop).off("close", ahead.drop);
    ahead.connection.ref();
    handedOut.add(ahead.connection);
    return ahead.connection;
  };

  return {
    async open(url, signal) {
      const host = hostOf(url);
      const port = Number(url.port) || defaultPort;
      const origin = originKey(host, port);
      const connection = connectNew({ host, port, servername: serverName(host), keepAlive: true });
      let ready = false;
      const drop = () => {
        if (waiting.get(origin)?.connection !== connection) return; // a request has it now
        waiting.delete(origin);
        connection.destroy();
      };
      const giveUp = () => {
        if (!ready) drop();
      };
      connection.on("error", drop);
      connection.once("close", drop);
      waiting.get(origin)?.connection.destroy();
      waiting.set(origin, { connection, drop });
      await new Promise<void>((resolve) => {
        connection.once(url.protocol === "https:" ? "secureConnect" : "connect", () => {
          ready = true;
          // Open and idle, as a kept-alive connection in the agent's pool is: not keeping the process up.
          if (waiting.get(origin)?.connection === connection) connection.unref();
          resolve();
        });
        connection.once("close", () => resolve());
        if (signal.aborted) giveUp();
        else signal.addEventListener("abort", giveUp, { once: true });
      });
      signal.removeEventListener("abort", giveUp);
    },
    wasOpenedAhead: (socket) => handedOut.has(socket),
  };
}

/** The host as node:http passes it to the agent: an IPv6 address without its brackets. */
function hostOf(url: URL): string {
  return url.hostname.startsWith("[") ? url.hostname.slice(1, -1) : url.hostname;
}

/** TLS's server name: the host, unless it is an IP address, which SNI does not carry. */
function serverName(host: string): string | undefined {
  return /^[\d.]+$/.test(host) || host.includes(":") ? undefined : host;
}

function originKey(host: string, port: number | string): string {
  return `${host}:${port}`;
}
