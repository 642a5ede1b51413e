/**
 * The outbound transport on a kept-alive connection that the server closes just as it is reused: the
 * race behind the CI failure `GetItem failed: Error: socket hang up` (a server's idle timeout firing as
 * the next request arrives). A real server plays it on cue: it answers the first request on each
 * connection and destroys the connection when a second one arrives on it, without answering.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { NoAnswerError, sendRequest } from "../../lambda/transport/http-request.ts";

let server: Server | undefined;

afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
  server = undefined;
});

interface Played {
  url: URL;
  /** Requests received, and how many reached a connection that had answered before. */
  received: () => number;
  onReusedConnection: () => number;
  connections: () => number;
}

/** A server that answers once per connection; `onSecond` says what it does with a second request. */
async function oneAnswerPerConnection(onSecond: "destroy" | "half-answer-then-destroy"): Promise<Played> {
  const answered = new WeakSet<Socket>();
  let received = 0;
  let onReusedConnection = 0;
  let connections = 0;
  server = createServer((request, response) => {
    received++;
    request.resume();
    request.on("end", () => {
      if (!answered.has(request.socket)) {
        answered.add(request.socket);
        response.writeHead(200, { "content-type": "text/plain" }).end(`answer ${received}`);
        return;
      }
      onReusedConnection++;
      if (onSecond === "half-answer-then-destroy") {
        request.socket.write("HTTP/1.1 200 OK\r\ncontent-le");
        request.socket.end(() => request.socket.destroy());
      } else {
        request.socket.resetAndDestroy();
      }
    });
  });
  server.on("connection", () => connections++);
  await new Promise<void>((resolve) => server?.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: new URL(`http://127.0.0.1:${port}/`),
    received: () => received,
    onReusedConnection: () => onReusedConnection,
    connections: () => connections,
  };
}

const post = (url: URL, onResend?: () => void) =>
  sendRequest({
    method: "POST",
    url,
    headers: { "content-type": "text/plain" },
    body: "payload",
    signal: AbortSignal.timeout(10_000),
    ...(onResend ? { onResend } : {}),
  });

describe("a kept-alive connection closed by the server as it is reused", () => {
  it("is survived: the request is sent once more, on a new connection, and answered", async () => {
    const played = await oneAnswerPerConnection("destroy");
    expect((await post(played.url)).body.toString()).toBe("answer 1");
    let resends = 0;
    const second = await post(played.url, () => resends++);
    expect(second.status).toBe(200);
    expect(second.body.toString()).toBe("answer 3");
    // Sent on the kept-alive connection (which the server dropped), then once on a new one.
    expect(played.onReusedConnection()).toBe(1);
    expect(played.received()).toBe(3);
    expect(played.connections()).toBe(2);
    expect(resends).toBe(1);
  });

  it("is not resent when part of the answer had come: the failure is reported, as sent", async () => {
    const played = await oneAnswerPerConnection("half-answer-then-destroy");
    await post(played.url);
    const failure = await post(played.url).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(NoAnswerError);
    expect((failure as NoAnswerError).requestSent).toBe(true);
    expect(played.received()).toBe(2);
  });

  it("is resent once only: a second reset is reported as a request that may have been acted on", async () => {
    const played = await oneAnswerPerConnection("destroy");
    await post(played.url);
    // From now on every request is refused, on any connection.
    server?.removeAllListeners("request");
    server?.on("request", (request) => request.socket.resetAndDestroy());
    const failure = await post(played.url).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(NoAnswerError);
    expect((failure as NoAnswerError).requestSent).toBe(true);
    expect(played.connections()).toBe(2);
  });
});

describe("whether a failed request was sent", () => {
  it("was not when the connection was refused", async () => {
    const played = await oneAnswerPerConnection("destroy");
    await new Promise((resolve) => server?.close(resolve));
    const failure = await post(played.url).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(NoAnswerError);
    expect((failure as NoAnswerError).requestSent).toBe(false);
    expect((failure as NoAnswerError).message).toMatch(/ECONNREFUSED/);
  });
});
