import type { Socket, SocketOptions } from "node:dgram";

/** Where the X-Ray daemon listens for segment documents (UDP). */
export interface DaemonAddress {
  host: string;
  port: number;
}

/**
 * `AWS_XRAY_DAEMON_ADDRESS` as Lambda and the X-Ray SDKs write it: `host:port` (`169.254.79.129:2000`,
 * `[::1]:2000`), or `tcp:host:port udp:host:port` of which the UDP one is used. Undefined if malformed.
 */
export function parseDaemonAddress(value: string): DaemonAddress | undefined {
  const entries = value.trim().split(/\s+/);
  const entry =
    entries.find((part) => part.startsWith("udp:"))?.slice(4) ??
    (entries.length === 1 ? entries[0] : undefined);
  const match = entry?.match(/^(?:\[([0-9a-fA-F:.]+)\]|([^\s:[\]]+)):(\d{1,5})$/);
  if (!match) return undefined;
  const port = Number(match[3]);
  if (port < 1 || port > 65_535) return undefined;
  return { host: match[1] ?? match[2] ?? "", port };
}

/** Every document sent to the daemon starts with this line (X-Ray's daemon protocol). */
export const DAEMON_HEADER = '{"format": "json", "version": 1}\n';

export interface DaemonClient {
  /** Sends one segment document; never throws, never waits. */
  send(document: object): void;
}

type Dgram = typeof import("node:dgram");

/** A lookup that answers the address it is given (dgram asks even for an IP address). */
function knownAddress(family: 4 | 6): SocketOptions["lookup"] {
  return (host, _options, found) => found(null, host, family);
}

/** 4 or 6 for an IP address, undefined for a host name. */
function ipFamily(host: string): 4 | 6 | undefined {
  if (/^\d{1,3}(\.\d{1,3}){3}$/.test(host)) return 4;
  return host.includes(":") ? 6 : undefined;
}

/**
 * Sends segment documents to the daemon over UDP. The socket is opened on the first send and never keeps
 * the process alive (unref); a send that fails, or a daemon that is not there, is ignored: a trace is
 * worth less than the request it describes. `dgram` is node:dgram, loaded by the caller on first need.
 */
export function createDaemonClient(address: DaemonAddress, dgram: Dgram): DaemonClient {
  let socket: Socket | undefined;
  const open = (): Socket => {
    const family = ipFamily(address.host);
    const opened = dgram.createSocket({
      type: family === 6 ? "udp6" : "udp4",
      // An IP address (Lambda's daemon has one) needs no lookup: the first send then does not load node:dns.
      ...(family === undefined ? {} : { lookup: knownAddress(family) }),
    });
    opened.on("error", () => undefined);
    opened.unref();
    return opened;
  };
  return {
    send(document) {
      try {
        socket ??= open();
        socket.send(
          `${DAEMON_HEADER}${JSON.stringify(document)}`,
          address.port,
          address.host,
          () => undefined,
        );
      } catch {
        // A closed socket or an unresolvable name: the trace is lost, the request is not.
      }
    },
  };
}
