import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { type DynamoDbIdentity, LOCAL_IDENTITY } from "../../local/dynamodb.ts";
import { forwardToDynamoDb, readRequestBody } from "./dynamodb-forward.ts";
import { sigV4Refusal } from "./sigv4-verifier.ts";

/**
 * What the endpoint does with one request:
 * - `proxy`: forward it to the real DynamoDB-compatible upstream and relay the answer;
 * - `throttle`, `provisioned-throughput`: a 400 throttling error, as DynamoDB sends it;
 * - `status-500`, `status-503`: a server error with a DynamoDB error body;
 * - `html-502`: a load balancer's HTML error page;
 * - `hang`: never answer; `reset`: reset the connection (TCP RST) without answering;
 * - `malformed`: 200 with a body that is not JSON; `truncated`: 200 with JSON cut short;
 * - `null-500`: 500 with the JSON body `null`;
 * - `condition-failed-without-item`: ConditionalCheckFailedException with no `Item`, as servers that
 *   ignore ReturnValuesOnConditionCheckFailure answer;
 * - `proxy-then-hang`, `proxy-then-reset`: forward it (so the write happens) but lose the answer;
 * - `replicated-write-conflict`: ReplicatedWriteConflictException (another Region writing the same item);
 * - `access-denied`: AccessDeniedException, a refusal no retry can help (the role lacks the permission);
 * - `proxy-then-replicated-write-conflict`: forward it (the other Region's identical write lands), then
 *   answer ReplicatedWriteConflictException.
 */
export type Fault =
  | "proxy"
  | "throttle"
  | "provisioned-throughput"
  | "status-500"
  | "status-503"
  | "html-502"
  | "hang"
  | "reset"
  | "malformed"
  | "truncated"
  | "null-500"
  | "condition-failed-without-item"
  | "proxy-then-hang"
  | "proxy-then-reset"
  | "replicated-write-conflict"
  | "access-denied"
  | "proxy-then-replicated-write-conflict";

export interface RecordedRequest {
  /** The operation, e.g. `PutItem`. */
  operation: string;
  body: Record<string, unknown>;
  fault: Fault;
  /** Why the endpoint would refuse the request's SigV4 signature, as DynamoDB checks it; undefined if valid. */
  signatureRefusal: string | undefined;
  /** The session token the request carried (x-amz-security-token), if any. */
  sessionToken: string | undefined;
}

export interface FaultyDynamoDb {
  url: string;
  /** Answers the next requests with `faults`, in order, then every later one with `fallback`. */
  script(faults: Fault[], fallback?: Fault): void;
  requests(): RecordedRequest[];
  clearRequests(): void;
  /** TCP connections accepted so far. */
  connections(): number;
  /** Unsigned `GET /` requests answered (DynamoDB's health check; the client's prewarm sends none). */
  healthChecks(): number;
  /**
   * Calls `listener` (as well as those added before) each time a request has been taken (and, for `proxy-then-hang`, written) and will
   * never be answered: the moment a test's fake clock can time the attempt out.
   */
  onUnanswered(listener: () => void): void;
  close(): Promise<void>;
}

const JSON_1_0 = "application/x-amz-json-1.0";
const REPLICATED_WRITE_CONFLICT_MESSAGE =
  "The request was rejected because one or more items in the request are being modified by a request in another Region.";

/** A loopback DynamoDB endpoint that misbehaves on cue, in front of a real one (dynalite). */
export async function startFaultyDynamoDb(
  upstream: string,
  identity: DynamoDbIdentity = LOCAL_IDENTITY,
): Promise<FaultyDynamoDb> {
  let queue: Fault[] = [];
  let fallback: Fault = "proxy";
  let recorded: RecordedRequest[] = [];
  let connections = 0;
  let healthChecks = 0;
  const unansweredListeners: (() => void)[] = [];
  const unanswered = () => {
    for (const listener of unansweredListeners) listener();
  };

  const server = createServer((request, response) => {
    void handle(request, response).catch(() => request.socket.destroy());
  });
  server.on("connection", () => connections++);

  async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const raw = await readRequestBody(request);
    if (request.method === "GET" && request.url === "/") {
      healthChecks++;
      response.writeHead(200, { "content-type": "text/plain" }).end("healthy: dynamodb.local");
      return;
    }
    const operation = String(request.headers["x-amz-target"] ?? "").split(".")[1] ?? "";
    const fault = queue.shift() ?? fallback;
    const signatureRefusal = sigV4Refusal(
      { method: request.method ?? "", path: request.url ?? "", headers: request.headers, body: raw },
      { ...identity.credentials, region: identity.region, service: "dynamodb" },
    );
    const sessionToken = request.headers["x-amz-security-token"];
    recorded.push({
      operation,
      body: JSON.parse(raw.toString("utf8")) as Record<string, unknown>,
      fault,
      signatureRefusal,
      sessionToken: typeof sessionToken === "string" ? sessionToken : undefined,
    });

    const error = (status: number, type: string, message: string): void => {
      response
        .writeHead(status, { "content-type": JSON_1_0 })
        .end(JSON.stringify({ __type: `com.amazonaws.dynamodb.v20120810#${type}`, message }));
    };
    switch (fault) {
      case "proxy":
      case "proxy-then-hang":
      case "proxy-then-reset": {
        const answer = await forwardToDynamoDb(upstream, request, raw);
        if (fault === "proxy-then-hang") return unanswered();
        if (fault === "proxy-then-reset") {
          request.socket.resetAndDestroy();
          return;
        }
        response.writeHead(answer.status, { "content-type": answer.contentType }).end(answer.body);
        return;
      }
      case "throttle":
        return error(400, "ThrottlingException", "Rate of requests exceeds the allowed throughput.");
      case "provisioned-throughput":
        return error(
          400,
          "ProvisionedThroughputExceededException",
          "The level of configured provisioned throughput for the table was exceeded.",
        );
      case "status-500":
        return error(500, "InternalServerError", "Internal server error");
      case "status-503":
        return error(503, "ServiceUnavailable", "Service unavailable");
      case "html-502":
        response.writeHead(502, { "content-type": "text/html" }).end("<html><body>Bad Gateway</body></html>");
        return;
      case "hang":
        return unanswered();
      case "reset":
        request.socket.resetAndDestroy();
        return;
      case "malformed":
        response.writeHead(200, { "content-type": JSON_1_0 }).end("<?xml version='1.0'?><oops/>");
        return;
      case "truncated":
        response.writeHead(200, { "content-type": JSON_1_0 }).end('{"ConsumedCapacity":{"Tab');
        return;
      case "null-500":
        response.writeHead(500, { "content-type": JSON_1_0 }).end("null");
        return;
      case "condition-failed-without-item":
        return error(400, "ConditionalCheckFailedException", "The conditional request failed");
      case "proxy-then-replicated-write-conflict":
        await forwardToDynamoDb(upstream, request, raw);
        return error(400, "ReplicatedWriteConflictException", REPLICATED_WRITE_CONFLICT_MESSAGE);
      case "replicated-write-conflict":
        return error(400, "ReplicatedWriteConflictException", REPLICATED_WRITE_CONFLICT_MESSAGE);
      case "access-denied":
        return error(400, "AccessDeniedException", "User is not authorized to perform: dynamodb:PutItem");
    }
  }

  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    script(faults, nextFallback = "proxy") {
      queue = [...faults];
      fallback = nextFallback;
    },
    requests: () => [...recorded],
    clearRequests() {
      recorded = [];
    },
    connections: () => connections,
    healthChecks: () => healthChecks,
    onUnanswered(listener) {
      unansweredListeners.push(listener);
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
