/**
 * A fetch of the caller's, against a real HTTP server on 127.0.0.1: one that ignores the request's signal
 * is given up all the same at the attempt's timeout or the call's deadline, whether it waits for the
 * answer or for its body, and an answer that comes after is cancelled unread (the fake clock moves only
 * once the request is at the server, so that what is given up is the request in flight); one whose
 * answers have bodies without getReader (node-fetch 3's Node streams) is read, up to the cap; and a body
 * cut off after its status came is a lost answer, retried.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { Readable } from "node:stream";
import type { ReadableStream as NodeReadableStream } from "node:stream/web";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createPlantStoreClient,
  type FetchFunction,
  MAX_ANSWER_BYTES,
  PlantStoreError,
  type RetryOptions,
} from "../../client/index.ts";
import { FakeClock } from "../support/fake-clock.ts";
import { START, settle } from "./fakes.ts";

/** Requests the server holds unanswered, each with what answers it, in the order they came. */
const held: { path: string; response: ServerResponse }[] = [];
const arrivals: ((path: string) => void)[] = [];
let server: ReturnType<typeof createServer>;
let baseUrl: string;
/** Whether the next request to /broken-once is cut off. */
let brokenOnce = false;

/** The next request the server gets (its path), once it has it whole. */
const nextArrival = () => new Promise<string>((resolve) => arrivals.push(resolve));

beforeAll(async () => {
  server = createServer((request: IncomingMessage, response: ServerResponse) => {
    request.resume();
    request.on("end", () => {
      const path = request.url ?? "";
      const json = (body: string) =>
        response.writeHead(200, { "content-type": "application/json" }).end(body);
      if (path === "/answering/plants") return json('{"name":"Fern"}');
      if (path === "/large/plants") return json(`{"name":"${"x".repeat(MAX_ANSWER_BYTES)}"}`);
      // A status and part of the body it announced, then the connection is gone (always, or once).
      if (path === "/broken-once/plants") {
        if (!brokenOnce) return json('{"name":"Fern"}');
        brokenOnce = false;
      }
      if (path === "/broken/plants" || path === "/broken-once/plants") {
        response.writeHead(200, { "content-type": "application/json", "content-length": "100" });
        return response.write('{"name":', () => response.socket?.destroy());
      }
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

/** A client of the fixed token "t" for `<baseUrl><path>`; on the system clock unless given another. */
function clientAt(path: string, retry: RetryOptions, fetch: FetchFunction, clock?: FakeClock) {
  return createPlantStoreClient({
    baseUrl: `${baseUrl}${path}`,
    credentials: { token: "t" },
    fetch,
    clock,
    random: () => 0,
    retry,
  });
}

describe("a fetch of the caller's that ignores the request's signal", () => {
  it.each([
    ["retry.attemptTimeoutMs", { attemptTimeoutMs: 1000, maxAttempts: 2 }, 1000, 2],
    ["retry.deadlineMs", { deadlineMs: 1500, attemptTimeoutMs: 5000 }, 1500, 1],
  ])("is given up at %s while it waits for the answer", async (_option, retry, waitedMs, attempts) => {
    const clock = new FakeClock({ now: START });
    const client = clientAt("/silent", retry, ignoringSignal, clock);
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
    const clock = new FakeClock({ now: START });
    const telling: FetchFunction = async (url, init) => {
      const response = await ignoringSignal(url, init);
      answered();
      return response;
    };
    const client = clientAt("/stalled", { attemptTimeoutMs: 1000, maxAttempts: 1 }, telling, clock);
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
    const clock = new FakeClock({ now: START });
    const client = clientAt("/late", { attemptTimeoutMs: 1000, maxAttempts: 1 }, watchingCancel, clock);
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

/**
 * The global fetch's answer as node-fetch 3 gives it: its body a Node stream, with no getReader, read
 * whole by arrayBuffer().
 */
const likeNodeFetch: FetchFunction = async (url, init) => {
  const answer = await globalThis.fetch(url, init);
  const body = Readable.fromWeb(answer.body as NodeReadableStream<Uint8Array>);
  const { status, statusText, headers, ok, redirected, type } = answer;
  return {
    status,
    statusText,
    headers,
    ok,
    redirected,
    type,
    body,
    arrayBuffer: async () => new Uint8Array(Buffer.concat(await body.toArray())).buffer,
  } as unknown as Response;
};

/** A real clock, and time enough: the real server's answers are what is read. */
const patiently = (path: string, fetch: FetchFunction) =>
  clientAt(path, { attemptTimeoutMs: 30_000, deadlineMs: 60_000 }, fetch);

describe("a body a fetch of the caller's gives", () => {
  it("without getReader (node-fetch 3's Node stream) is read: the plant stored is answered", async () => {
    expect(await patiently("/answering", likeNodeFetch).createPlant({ id: 4n, name: "Fern" })).toEqual({
      name: "Fern",
    });
  });

  it("without getReader, over the cap, is refused once read", async () => {
    const error = await patiently("/large", likeNodeFetch)
      .createPlant({ id: 5n, name: "Fern" })
      .catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(PlantStoreError);
    expect(error).toMatchObject({
      kind: "unexpected-answer",
      status: 200,
      message: `POST ${baseUrl}/large/plants answered 200 with a body over 64 KiB, which was not read`,
    });
  });

  it.each([
    ["the global fetch's", ignoringSignal],
    ["node-fetch's", likeNodeFetch],
  ])(
    "cut off after its status came (%s), is a lost answer: retried, and the plant may have been stored",
    async (_fetch, fetch) => {
      const error = (await patiently("/broken", fetch)
        .createPlant({ id: 6n, name: "Fern" })
        .catch((thrown: unknown) => thrown)) as PlantStoreError;
      expect(error).toBeInstanceOf(PlantStoreError);
      expect(error).toMatchObject({ kind: "network", status: undefined, attempts: 3 });
      expect(error.message).toMatch(
        new RegExp(
          `^POST ${baseUrl}/broken/plants: answered 200, but its body was cut off \\(.+\\); the plant may have been stored`,
        ),
      );
    },
  );

  it("cut off once, then whole: the retry gives the plant", async () => {
    brokenOnce = true;
    expect(await patiently("/broken-once", globalThis.fetch).createPlant({ id: 7n, name: "Fern" })).toEqual({
      name: "Fern",
    });
    expect(brokenOnce).toBe(false);
  });
});
