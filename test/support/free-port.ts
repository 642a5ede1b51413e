import { createServer } from "node:net";

/**
 * A loopback port free now that no other process will be given meanwhile: the parallel tests listen on
 * port 0, which the kernel serves from its ephemeral range (32768–60999 on Linux, 49152–65535 elsewhere),
 * so a port probed with listen(0) and closed could go to one of them before it is used.
 */
export async function freePort(): Promise<number> {
  for (;;) {
    const port = 20_000 + Math.floor(Math.random() * 12_000);
    if (await canListen(port)) return port;
  }
}

function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once("error", () => resolve(false));
    probe.listen(port, "127.0.0.1", () => probe.close(() => resolve(true)));
  });
}
