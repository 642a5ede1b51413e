/**
 * The outbound transport on a kept-alive connection that the server closes just as it is reused: the
 * race behind the CI failure `GetItem failed: Error: socket hang up` (a server's idle timeout firing as
 * the next request arrives). A real server plays it on cue: it answers the first request on each
 * connection and destroys the connection when a second one arrives on it, without answering.
 * Then the connection a cold start opens ahead (openConnection), over plain HTTP and over real TLS.
 */
import { execFile } from "node:child_process";
import { createServer, type Server } from "node:http";
import { createServer as createTlsServer } from "node:https";
import type { AddressInfo, Socket } from "node:net";
import { promisify } from "node:util";
import { afterEach, describe, expect, it } from "vitest";
import { MAX_ANSWER_BYTES } from "../../lambda/transport/http-answer.ts";
import { NoAnswerError, openConnection, sendRequest } from "../../lambda/transport/http-request.ts";
import { createLoopbackCertificates } from "../../support/certificates.ts";

let server: Server | undefined;

afterEach(async () => {
  const closing = server;
  server = undefined;
  if (closing === undefined) return;
  closing.closeAllConnections();
  await new Promise((resolve) => closing.close(resolve));
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

const post = (url: URL) =>
  sendRequest({
    method: "POST",
    url,
    headers: { "content-type": "text/plain" },
    body: "payload",
    signal: AbortSignal.timeout(10_000),
  });

describe("a kept-alive connection closed by the server as it is reused", () => {
  it("is survived: the request is sent once more, on a new connection, and answered", async () => {
    const played = await oneAnswerPerConnection("destroy");
    expect((await post(played.url)).body.toString()).toBe("answer 1");
    const second = await post(played.url);
    expect(second.status).toBe(200);
    expect(second.body.toString()).toBe("answer 3");
    // Sent on the kept-alive connection (which the server dropped), then once on a new one.
    expect(played.onReusedConnection()).toBe(1);
    expect(played.received()).toBe(3);
    expect(played.connections()).toBe(2);
    expect(second.resent).toBe(true);
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

/** A server that counts connections and requests, answering each request or resetting it as told. */
async function countingServer(reset: (connectionNumber: number) => boolean) {
  let connections = 0;
  let received = 0;
  const numbers = new WeakMap<Socket, number>();
  server = createServer((request, response) => {
    received++;
    request.resume();
    request.on("end", () => {
      if (reset(numbers.get(request.socket) ?? 0)) request.socket.resetAndDestroy();
      else response.end(`answer ${received}`);
    });
  });
  server.on("connection", (socket: Socket) => numbers.set(socket, ++connections));
  await new Promise<void>((resolve) => server?.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: new URL(`http://127.0.0.1:${port}/`),
    connections: () => connections,
    received: () => received,
  };
}

describe("a connection opened ahead", () => {
  it("sends nothing, and is the connection the first request then uses", async () => {
    const counted = await countingServer(() => false);
    await openConnection(counted.url, AbortSignal.timeout(5000));
    expect(counted.connections()).toBe(1);
    expect(counted.received()).toBe(0);
    expect((await post(counted.url)).body.toString()).toBe("answer 1");
    expect(counted.connections()).toBe(1);
  });

  it("reset as its first request arrives is survived as a kept-alive one is: sent once more, on a new connection", async () => {
    const counted = await countingServer((connection) => connection === 1);
    await openConnection(counted.url, AbortSignal.timeout(5000));
    const answer = await post(counted.url);
    expect(answer.body.toString()).toBe("answer 2");
    expect(answer.resent).toBe(true);
    expect(counted.connections()).toBe(2);
  });

  it("closed by the server before any request is dropped: the request opens a new connection", async () => {
    const counted = await countingServer(() => false);
    server?.once("connection", (socket: Socket) => socket.destroy());
    await openConnection(counted.url, AbortSignal.timeout(5000));
    await new Promise((resolve) => setTimeout(resolve, 50)); // the close reaches the client
    const answer = await post(counted.url);
    expect(answer.body.toString()).toBe("answer 1");
    expect(answer.resent).toBe(false);
    expect(counted.connections()).toBe(2);
  });

  it("taken by a request while it opens, is that request's: the opening's signal giving up does not end it", async () => {
    const counted = await countingServer(() => false);
    const prewarm = new AbortController();
    const opening = openConnection(counted.url, prewarm.signal);
    const sending = post(counted.url); // takes the connection before TCP is up
    prewarm.abort(new Error("the prewarm's timeout"));
    const answer = await sending;
    expect(answer.body.toString()).toBe("answer 1");
    expect(answer.resent).toBe(false);
    await opening;
    expect(counted.connections()).toBe(1);
  });

  it("given up with its signal while connecting, resolves and leaves nothing open", async () => {
    // A listening socket whose backlog is never accepted: the TCP handshake completes in the kernel,
    // so use TLS, whose handshake this server never answers.
    const silent = createServer();
    silent.on("connection", () => undefined);
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
    try {
      const url = new URL(`https://127.0.0.1:${(silent.address() as AddressInfo).port}/`);
      const giveUp = new AbortController();
      const opening = openConnection(url, giveUp.signal);
      giveUp.abort(new Error("the attempt's timeout"));
      await expect(opening).resolves.toBeUndefined();
    } finally {
      silent.closeAllConnections();
      await new Promise((resolve) => silent.close(resolve));
    }
  });
});

/** A server whose answers are written as `answer` says, counting connections and requests. */
async function scriptedServer(
  answer: (response: import("node:http").ServerResponse, received: number) => void,
) {
  let connections = 0;
  let received = 0;
  server = createServer((request, response) => {
    received++;
    request.resume();
    request.on("end", () => answer(response, received));
  });
  server.on("connection", () => connections++);
  await new Promise<void>((resolve) => server?.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return { url: new URL(`http://127.0.0.1:${port}/`), connections: () => connections };
}

describe("answers as servers frame them, on connections kept for the next request", () => {
  it("reads a chunked answer, and sends the next request on the same connection", async () => {
    const scripted = await scriptedServer((response, received) => {
      response.writeHead(200, { "x-answer": String(received) });
      response.write("first part, ");
      response.end("second part");
    });
    const first = await post(scripted.url);
    expect(first.headers["transfer-encoding"]).toBe("chunked");
    expect(first.headers["x-answer"]).toBe("1");
    expect(first.body.toString()).toBe("first part, second part");
    expect((await post(scripted.url)).body.toString()).toBe("first part, second part");
    expect(scripted.connections()).toBe(1);
  });

  it("reads an answer the close ends, and opens a new connection for the next request", async () => {
    const scripted = await scriptedServer((response, received) => {
      response.socket?.end(`HTTP/1.1 200 OK\r\nconnection: close\r\n\r\nanswer ${received}`);
    });
    expect((await post(scripted.url)).body.toString()).toBe("answer 1");
    expect((await post(scripted.url)).body.toString()).toBe("answer 2");
    expect(scripted.connections()).toBe(2);
  });

  for (const [answerHead, why] of [
    ["HTTP/1.1 200 OK\r\nconnection: close\r\ncontent-length: 8", "Connection: close"],
    ["HTTP/1.0 200 OK\r\ncontent-length: 8", "HTTP/1.0"],
  ] as const) {
    it(`does not reuse a connection its answer ends (${why}), though the answer has a length`, async () => {
      const scripted = await scriptedServer((response, received) => {
        response.socket?.write(`${answerHead}\r\n\r\nanswer ${received}`);
      });
      expect((await post(scripted.url)).body.toString()).toBe("answer 1");
      expect((await post(scripted.url)).body.toString()).toBe("answer 2");
      expect(scripted.connections()).toBe(2);
    });
  }

  it("gives up when the signal aborts mid-answer: sent, and the connection is not kept", async () => {
    // The attempt's timeout, fired once half the answer is on its way: no race with the clock.
    const attempt = new AbortController();
    const scripted = await scriptedServer((response) => {
      response.writeHead(200, { "content-length": "10" });
      response.write("half", () => attempt.abort(new DOMException("no answer within 1 ms", "TimeoutError")));
    });
    const failure = await sendRequest({
      method: "POST",
      url: scripted.url,
      headers: {},
      body: "x",
      signal: attempt.signal,
    }).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(NoAnswerError);
    expect((failure as NoAnswerError).requestSent).toBe(true);
    expect((failure as NoAnswerError).message).toMatch(/TimeoutError/);
    server?.removeAllListeners("request");
    server?.on("request", (_request, response) => response.end("next"));
    expect((await post(scripted.url)).body.toString()).toBe("next");
    expect(scripted.connections()).toBe(2);
  });

  for (const [framing, endless] of [
    ["chunk size line", "1;"],
    ["trailer section", "0\r\n"],
  ] as const) {
    it(`refuses a chunked answer whose ${framing} never ends, once past MAX_ANSWER_BYTES`, async () => {
      // The server writes a little over the limit and then waits: only the limit can end the exchange.
      const scripted = await scriptedServer((response) => {
        const filler = framing === "trailer section" ? "x-filler: y\r\n" : "a";
        const head = `HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n${endless}`;
        response.socket?.write(head + filler.repeat(Math.ceil((MAX_ANSWER_BYTES + 1) / filler.length)));
      });
      const failure = await post(scripted.url).catch((error: unknown) => error);
      expect(failure).toBeInstanceOf(NoAnswerError);
      expect((failure as NoAnswerError).message).toBe(`Error: answer over ${MAX_ANSWER_BYTES} bytes`);
    });
  }

  it("refuses to send a header value that would end its line early", async () => {
    const scripted = await scriptedServer((response) => response.end("never"));
    const sending = sendRequest({
      method: "POST",
      url: scripted.url,
      headers: { "x-injected": "a\r\nx-other: b" },
      body: "x",
      signal: AbortSignal.timeout(5000),
    });
    await expect(sending).rejects.toThrow(TypeError);
    expect(scripted.connections()).toBe(0);
  });
});

describe("over TLS, in a process of its own", () => {
  const execute = promisify(execFile);
  const run = (file: string, args: string[], options: object) =>
    execute(file, args, options).catch((error: Error & { stderr?: string }) => {
      throw new Error(`${error.message}\n${error.stderr ?? ""}`);
    });
  const transport = new URL("../../lambda/transport/http-request.ts", import.meta.url).pathname;
  /** Opens a connection ahead to URL (argv[1]), then sends one POST unless argv[2] is "open-only". */
  const child = `
    import { openConnection, sendRequest } from ${JSON.stringify(transport)};
    const url = new URL(process.argv[1]);
    await openConnection(url, AbortSignal.timeout(5000));
    if (process.argv[2] !== "open-only") {
      const answer = await sendRequest({ method: "POST", url, headers: {}, body: "x", signal: AbortSignal.timeout(5000) });
      console.log(answer.status, answer.body.toString());
    }
  `;

  it("opens the TLS connection ahead, uses it, and the process then exits by itself", async () => {
    const certificates = await createLoopbackCertificates();
    let handshakes = 0;
    let received = 0;
    const tls = createTlsServer({ key: certificates.key, cert: certificates.cert }, (request, response) => {
      received++;
      request.resume();
      request.on("end", () => response.end("stored"));
    });
    tls.on("secureConnection", () => handshakes++);
    await new Promise<void>((resolve) => tls.listen(0, "127.0.0.1", resolve));
    const url = `https://127.0.0.1:${(tls.address() as AddressInfo).port}/`;
    const env = { PATH: process.env.PATH ?? "", NODE_EXTRA_CA_CERTS: certificates.caPath };
    const options = { env, timeout: 20_000 };
    try {
      const used = await run(
        process.execPath,
        ["--import", "tsx", "--input-type=module", "--eval", child, url],
        options,
      );
      expect(used.stdout.trim()).toBe("200 stored");
      expect(handshakes).toBe(1);
      expect(received).toBe(1);

      // Opened and never used: the connection does not keep the process alive.
      await run(
        process.execPath,
        ["--import", "tsx", "--input-type=module", "--eval", child, url, "open-only"],
        options,
      );
      expect(handshakes).toBe(2);
      expect(received).toBe(1);
    } finally {
      tls.closeAllConnections();
      await new Promise((resolve) => tls.close(resolve));
      await certificates.remove();
    }
  });
});
