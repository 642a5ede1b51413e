/**
 * The floors with duties send their PutItem under an attempt's timeout (limitAnswerTime in
 * bench/floor-handlers.ts), as the handler does: a store that never answers fails the request at that
 * time, and an answer in time stops the timer. Against a real local server.
 */
import { createServer, type IncomingMessage, request, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it, vi } from "vitest";
import { limitAnswerTime } from "../../bench/floor-handlers.ts";

let server: Server | undefined;

afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
  server = undefined;
});

async function serve(answers: boolean): Promise<number> {
  server = createServer((incoming: IncomingMessage, outgoing) => {
    incoming.resume();
    if (answers) incoming.on("end", () => outgoing.end("{}"));
  });
  await new Promise<void>((resolve) => server?.listen(0, "127.0.0.1", resolve));
  return (server.address() as AddressInfo).port;
}

function post(port: number, timeoutMs: number): Promise<{ outcome: string; afterMs: number }> {
  const startedAt = performance.now();
  return new Promise((resolve) => {
    const outgoing = request({ host: "127.0.0.1", port, method: "POST" }, (incoming) => {
      incoming.resume();
      incoming.on("end", () => resolve({ outcome: "answered", afterMs: performance.now() - startedAt }));
    });
    limitAnswerTime(outgoing, timeoutMs);
    outgoing.on("error", (error) =>
      resolve({ outcome: error.message, afterMs: performance.now() - startedAt }),
    );
    outgoing.end("{}");
  });
}

describe("the floors' answer timeout", () => {
  it("fails a request the store never answers, once its time is up", async () => {
    const { outcome, afterMs } = await post(await serve(false), 100);
    expect(outcome).toBe("no answer within 100 ms");
    expect(afterMs).toBeGreaterThanOrEqual(99);
  });

  it("stops its timer once the answer has come", async () => {
    const port = await serve(true);
    // This request's own timer, told apart by its delay: counting the process's timers would also count
    // those of other sockets (an earlier test's, closing meanwhile on a busy machine).
    const created = vi.spyOn(globalThis, "setTimeout");
    const cleared = vi.spyOn(globalThis, "clearTimeout");
    try {
      expect((await post(port, 60_000)).outcome).toBe("answered");
      await new Promise((resolve) => setImmediate(resolve));
      const index = created.mock.calls.findIndex(([, delay]) => delay === 60_000);
      expect(index).toBeGreaterThanOrEqual(0);
      expect(cleared).toHaveBeenCalledWith(created.mock.results[index]?.value);
    } finally {
      created.mockRestore();
      cleared.mockRestore();
    }
  });
});
