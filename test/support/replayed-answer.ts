import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";

/** What the endpoint answers: a status and body bytes as given, or a reset connection (TCP RST). */
export type RawAnswer = { status: number; body: string } | "reset";

export interface ReplayedAnswerServer {
  url: string;
  /** Every request from now on gets `answer`, byte for byte, whoever sends it. */
  answerWith(answer: RawAnswer): void;
  close(): Promise<void>;
}

/**
 * A loopback HTTP endpoint that gives every request the same scripted answer, so that two clients (the
 * function's and a library's) read the very same bytes. The request body is read whole before answering.
 */
export async function startReplayedAnswerServer(): Promise<ReplayedAnswerServer> {
  let answer: RawAnswer = { status: 200, body: "{}" };
  const server: Server = createServer((request, response) => {
    request.resume();
    request.on("end", () => {
      if (answer === "reset") {
        response.socket?.resetAndDestroy();
        return;
      }
      const body = Buffer.from(answer.body);
      response
        .writeHead(answer.status, {
          "content-type": "application/x-amz-json-1.0",
          "content-length": String(body.length),
          "x-amzn-requestid": "REPLAYED0000000000000000000000000000000000000000000000",
        })
        .end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    answerWith(next) {
      answer = next;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
