import { createSocket } from "node:dgram";
import type { AddressInfo } from "node:net";
import { segmentDocumentOf } from "../../local/traces.ts";

/** One segment document as received, parsed. */
export type SegmentDocument = Record<string, unknown> & { trace_id?: string };

export interface FakeXRayDaemon {
  /** For AWS_XRAY_DAEMON_ADDRESS. */
  address: string;
  /** Every document received so far, in order. */
  documents(): SegmentDocument[];
  /** Resolves once `count` documents of trace `root` have arrived (the test's timeout ends a wait in vain). */
  received(root: string, count: number): Promise<SegmentDocument[]>;
  close(): Promise<void>;
}

/**
 * A loopback UDP port that reads what a function sends the X-Ray daemon: each datagram must be the
 * daemon header line then one JSON document; anything else fails the test that reads it.
 */
export async function startFakeXRayDaemon(): Promise<FakeXRayDaemon> {
  const socket = createSocket("udp4");
  const documents: SegmentDocument[] = [];
  const malformed: string[] = [];
  const waiters = new Set<() => void>();
  socket.on("message", (message) => {
    const text = message.toString("utf8");
    const document = segmentDocumentOf(text);
    if (document === undefined) {
      malformed.push(text);
    } else {
      documents.push(document as SegmentDocument);
    }
    for (const waiter of waiters) waiter();
  });
  await new Promise<void>((resolve) => socket.bind(0, "127.0.0.1", resolve));
  const { port } = socket.address() as AddressInfo;
  const checked = () => {
    if (malformed.length > 0)
      throw new Error(`datagrams without the daemon header: ${malformed.join(" | ")}`);
    return [...documents];
  };
  const ofTrace = (root: string) => documents.filter((document) => document.trace_id === root);
  return {
    address: `127.0.0.1:${port}`,
    documents: checked,
    received(root, count) {
      return new Promise((resolve, reject) => {
        const check = () => {
          if (malformed.length > 0) {
            waiters.delete(check);
            reject(new Error(`datagrams without the daemon header: ${malformed.join(" | ")}`));
          } else if (ofTrace(root).length >= count) {
            waiters.delete(check);
            resolve(ofTrace(root));
          }
        };
        waiters.add(check);
        check();
      });
    },
    close: () => new Promise<void>((resolve) => socket.close(() => resolve())),
  };
}
