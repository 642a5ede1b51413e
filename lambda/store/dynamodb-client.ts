import { timed } from "../call-timings.ts";
import { isObject } from "../is-object.ts";
import { nodeCrypto } from "../node-crypto.ts";
import {
  NoAnswerError,
  type OutboundResponse,
  openConnection,
  sendRequest,
} from "../transport/http-request.ts";
import { type DynamoDbIdentity, signedHeaders } from "./sigv4.ts";

export interface DynamoDbClientSettings extends DynamoDbIdentity {
  /** e.g. `https://dynamodb.eu-west-1.amazonaws.com`, or a local endpoint. */
  endpoint: string;
  /** Told of each call sent, as it starts and as it ends (the traces, lambda/tracing/). */
  observeCall?: DynamoDbCallObserver | undefined;
}

/**
 * How one call ended, for an observer, never its input or body: the status and `x-amzn-RequestId` of its
 * answer, DynamoDB's error type for a non-2xx one; or why no usable answer came (or a failure to sign).
 */
export interface DynamoDbCallOutcome {
  status?: number;
  requestId?: string | undefined;
  errorType?: string;
  failure?: unknown;
}

/** Called as a call starts; what it returns, if anything, is called once as the call ends. */
export type DynamoDbCallObserver = (
  operation: string,
) => ((outcome: DynamoDbCallOutcome) => void) | undefined;

/** DynamoDB answered, with an error: its `__type` (without the namespace) says what went wrong. */
export class DynamoDbError extends Error {
  override name = "DynamoDbError";
  constructor(
    readonly type: string,
    readonly status: number,
    readonly body: Record<string, unknown>,
    /** The call was sent twice (a stale connection): the first may have been acted on too. */
    readonly resent = false,
  ) {
    super(
      `DynamoDB answered ${status} ${type}${typeof body.message === "string" ? `: ${body.message}` : ""}`,
    );
  }
}

/**
 * No usable answer: no connection, a reset, a timeout, or a body that is not a JSON object (a proxy's page,
 * a truncated answer). Worth another try. `requestSent` is false only when the call never reached DynamoDB.
 */
export class TransientDynamoDbError extends Error {
  override name = "TransientDynamoDbError";
  readonly requestSent: boolean;
  constructor(message: string, options: ErrorOptions & { requestSent?: boolean } = {}) {
    super(message, options);
    this.requestSent = options.requestSent ?? true;
  }
}

/** Any answer DynamoDB gave, as status and decoded body (error answers included). */
export interface DynamoDbAnswer {
  status: number;
  body: Record<string, unknown>;
  /** DynamoDB's `x-amzn-RequestId` header: the call's id, for its trace and for AWS support. */
  requestId?: string | undefined;
  /** Sent twice after a stale connection (lambda/transport/http-request.ts): the first may have acted. */
  resent: boolean;
}

export interface DynamoDbClient {
  /** One call; resolves with every answer that is a JSON object, 2xx or not. */
  send(operation: string, input: object, signal: AbortSignal): Promise<DynamoDbAnswer>;
  /** One call; a non-2xx answer becomes a DynamoDbError. */
  call(operation: string, input: object, signal: AbortSignal): Promise<Record<string, unknown>>;
  /**
   * Opens the connection to the endpoint (TLS handshake included), sending nothing on it, for the next
   * call, unless `signal` aborts first. Never rejects: a failed warm-up only means the first call
   * connects itself.
   */
  prewarm(signal: AbortSignal): Promise<void>;
}

const JSON_1_0 = "application/x-amz-json-1.0";

/**
 * The headers of a signed DynamoDB JSON-protocol call (SigV4, see sigv4.ts): the only place the project
 * signs a request.
 */
export function signedDynamoDbHeaders(
  endpoint: URL,
  identity: DynamoDbIdentity,
  operation: string,
  payload: string,
): Record<string, string> {
  return signedHeaders(
    {
      method: "POST",
      url: endpoint,
      headers: {
        "content-type": JSON_1_0,
        "content-length": String(Buffer.byteLength(payload)),
        "x-amz-target": `DynamoDB_20120810.${operation}`,
      },
      body: payload,
      service: "dynamodb",
    },
    identity,
  );
}

/** DynamoDB's JSON protocol over lambda/transport/http-request.ts, signed per call, observed if asked. */
export function createDynamoDbClient(settings: DynamoDbClientSettings): DynamoDbClient {
  const endpoint = new URL(settings.endpoint);

  const sendUnobserved = async (operation: string, input: object, signal: AbortSignal) => {
    const payload = JSON.stringify(input);
    // Outside the try: a signing failure is a bug (a 500), not a fault of DynamoDB's to retry.
    const headers = signedDynamoDbHeaders(endpoint, settings, operation, payload);
    let answer: OutboundResponse;
    try {
      answer = await sendRequest({ method: "POST", url: endpoint, headers, body: payload, signal });
    } catch (error) {
      const requestSent = !(error instanceof NoAnswerError) || error.requestSent;
      const message = `${operation} failed: ${(error as Error).message}`;
      throw new TransientDynamoDbError(message, { cause: error, requestSent });
    }
    const { status, resent } = answer;
    const body = decodeBody(operation, answer);
    return { status, body, requestId: answer.headers["x-amzn-requestid"], resent };
  };
  const send = (operation: string, input: object, signal: AbortSignal): Promise<DynamoDbAnswer> =>
    timed("storeMs", () => sendObserved(operation, input, signal));
  const sendObserved = async (
    operation: string,
    input: object,
    signal: AbortSignal,
  ): Promise<DynamoDbAnswer> => {
    const ended = settings.observeCall?.(operation);
    if (!ended) return sendUnobserved(operation, input, signal);
    try {
      const answer = await sendUnobserved(operation, input, signal);
      const { status, requestId } = answer;
      ended({ status, requestId, ...(isSuccess(status) ? {} : { errorType: errorType(answer.body) }) });
      return answer;
    } catch (failure) {
      ended({ failure });
      throw failure;
    }
  };

  return {
    send,
    async call(operation, input, signal) {
      const { status, body, resent } = await send(operation, input, signal);
      if (isSuccess(status)) return body;
      throw new DynamoDbError(errorType(body), status, body, resent);
    },
    async prewarm(signal) {
      const opening = openConnection(endpoint, signal);
      nodeCrypto(); // the signer's, loaded while the connection is looked up and opened
      await opening.catch(() => undefined);
    },
  };
}

function isSuccess(status: number): boolean {
  return status >= 200 && status < 300;
}

/**
 * The error type of a non-2xx answer's body (its `__type` without the namespace); DynamoDB's are a few
 * dozen characters, and a proxy's longer one is cut, so that no log line or trace document grows with it.
 */
function errorType({ __type, code }: Record<string, unknown>): string {
  const type =
    String(__type ?? code ?? "UnknownError")
      .split("#")
      .pop() || "UnknownError";
  return type.slice(0, 100);
}

function decodeBody(operation: string, { status, body }: OutboundResponse): Record<string, unknown> {
  let decoded: unknown;
  try {
    decoded = JSON.parse(body.toString("utf8"));
  } catch {
    throw new TransientDynamoDbError(`${operation} answered ${status} with a body that is not JSON`);
  }
  // `null`, a string or a list (a proxy's answer, not DynamoDB's) is as unreadable as no JSON.
  if (!isObject(decoded)) {
    throw new TransientDynamoDbError(`${operation} answered ${status} with a body that is not an object`);
  }
  return decoded;
}
