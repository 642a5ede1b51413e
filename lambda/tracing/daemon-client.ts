import type { Socket, SocketOptions } from "node:dgram";
import type { DaemonAddress } from "./trace-header.ts";

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
