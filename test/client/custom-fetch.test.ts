/**
 * A fetch of the caller's, against a real HTTP server on 127.0.0.1: one that ignores the request's signal
 * is given up all the same at the attempt's timeout or the call's deadline, whether it waits for the
 * answer or for its body, and an answer that comes after is cancelled unread. The fake clock moves only
 * once the request is at the server, so that what is given up is the request in flight.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createPlantStoreClient, type FetchFunction, type RetryOptions } from "../../client/index.ts";
import { FakeClock } from "../support/fake-clock.ts";
import { START, settle } from "./fakes.ts";

/** Requests the server holds unanswered, each with what answers it, in the order they came. */
const held: { path: string; response: ServerResponse }[] = [];
const arrivals: ((path: string) => void)[] = [];
let server: ReturnType<typeof createServer>;
let baseUrl: string;

/** The next request the server gets (its path), once it has it whole. */
const nextArrival = () => new Promise<string>((resolve) => arrivals.push(resolve));

beforeAll(async () => {
  server = createServer((request: IncomingMessage, response: ServerResponse) => {
    request.resume();
    request.on("end", () => {
      const path = request.url ?? "";
      // A status and the start of a body, then nothing: its body never ends.
      if (path === "/stalled/plants") response.writeHead(200).write('{"name":');
      held.push({ path, response });
      arrivals.shift()?.(path);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

/** The global fetch, without the signal: it waits for the answer and its body however long they take. */
const ignoringSignal: FetchFunction = (url, init) => globalThis.fetch(url, { ...init, signal: null });

function clientAt(path: string, retry: RetryOptions, fetch = ignoringSignal) {
  const clock = new FakeClock({ now: START });
  const client = createPlantStoreClient({
    baseUrl: `${baseUrl}${path}`,
    credentials: { token: "t" },
    fetch,
    clock,
    random: () => 0,
    retry,
  });
  return { clock, client };
}

describe("a fetch of the caller's that ignores the request's signal", () => {
  it.each([
    ["retry.attemptTimeoutMs", { attemptTimeoutMs: 1000, maxAttempts: 2 }, 1000, 2],
    ["retry.deadlineMs", { deadlineMs: 1500, attemptTimeoutMs: 5000 }, 1500, 1],
  ])("is given up at %s while it waits for the answer", async (_option, retry, waitedMs, attempts) => {
    const { clock, client } = clientAt("/silent", retry);
    const arrived = nextArrival();
    const call = client.createPlant({ id: 1n, name: "Fern" });
    expect(await arrived).toBe("/silent/plants");
    await expect(settle(clock, call)).rejects.toMatchObject({
      kind: "timeout",
      attempts,
      message: `POST ${baseUrl}/silent/plants: no answer within ${waitedMs} ms; the plant may have been stored: sending the same create again is safe (200 if it was)`,
    });
  });

  it("is given up at retry.attemptTimeoutMs while it waits for the rest of a body", async () => {
    let answered: () => void = () => undefined;
    const headersCame = new Promise<void>((resolve) => {
      answered = resolve;
    });
    const { clock, client } = clientAt(
      "/stalled",
      { attemptTimeoutMs: 1000, maxAttempts: 1 },
      async (url, init) => {
        const response = await ignoringSignal(url, init);
        answered();
        return response;
      },
    );
    const call = client.createPlant({ id: 2n, name: "Fern" });
    await headersCame;
    await expect(settle(clock, call)).rejects.toMatchObject({ kind: "timeout", attempts: 1 });
  });

  it("cancels the body of an answer that comes after the exchange gave up on it, unread", async () => {
    let cancelled = false;
    let returned: () => void = () => undefined;
    const lateAnswerReturned = new Promise<void>((resolve) => {
      returned = resolve;
    });
    const watchingCancel: FetchFunction = async (url, init) => {
      const answer = await ignoringSignal(url, init);
      const reader = (answer.body as ReadableStream<Uint8Array>).getReader();
      const body = new ReadableStream<Uint8Array>({
        async pull(controller) {
          const { done, value } = await reader.read();
          if (done) controller.close();
          else controller.enqueue(value);
        },
        cancel(reason) {
          cancelled = true;
          return reader.cancel(reason);
        },
      });
      queueMicrotask(returned);
      return new Response(body, { status: answer.status, headers: answer.headers });
    };
    const { clock, client } = clientAt("/late", { attemptTimeoutMs: 1000, maxAttempts: 1 }, watchingCancel);
    const arrived = nextArrival();
    const call = client.createPlant({ id: 3n, name: "Fern" });
    await arrived;
    await expect(settle(clock, call)).rejects.toMatchObject({ kind: "timeout" });

    const late = held.find(({ path }) => path === "/late/plants");
    late?.response.writeHead(200, { "content-type": "application/json" }).end('{"name":"Fern"}');
    await lateAnswerReturned;
    await new Promise((resolve) => setImmediate(resolve));
    expect(cancelled).toBe(true);
  });
});
