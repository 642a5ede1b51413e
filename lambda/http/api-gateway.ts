import type {
  APIGatewayProxyEvent,
  APIGatewayProxyEventV2,
  APIGatewayProxyStructuredResultV2,
  Context,
} from "aws-lambda";
import { isObject } from "../is-object.ts";
import type { RequestBody } from "../request/request-body.ts";

/** What API Gateway invokes the function with: an HTTP API (payload 2.0) or a REST API (payload 1.0) event. */
export type ApiGatewayEvent = APIGatewayProxyEventV2 | APIGatewayProxyEvent;

/** What the function returns to API Gateway: always the structured form, with a JSON body. */
export type ApiGatewayResult = APIGatewayProxyStructuredResultV2 & {
  statusCode: number;
  headers: Record<string, string>;
  body: string;
  isBase64Encoded: false;
};

/**
 * The incoming request: method and path (empty when the event has none), header names lower-cased with the
 * values of one name joined by commas, the body as API Gateway sent it (read after authentication).
 */
export interface ApiRequest {
  requestId: string;
  method: string;
  /** The path as the client sent it, undecoded, without the query: `rawPath` (2.0) or `path` (1.0). */
  path: string;
  headers: Map<string, string>;
  body: RequestBody | undefined;
}

/** The endpoint's answer before it is serialised for API Gateway. */
export interface ApiResponse {
  status: number;
  headers?: Record<string, string>;
  body: unknown;
}

/** Events are typed, but a test or a misconfigured integration may still send anything: read defensively. */
type LooseEvent = Partial<APIGatewayProxyEventV2 & APIGatewayProxyEvent> | null | undefined;

export function toApiRequest(
  event: ApiGatewayEvent | null | undefined,
  context?: Pick<Context, "awsRequestId">,
): ApiRequest {
  const loose = event as LooseEvent;
  const headers = headersOf(loose);
  return {
    requestId: loose?.requestContext?.requestId ?? context?.awsRequestId ?? "unknown",
    method: stringOr(loose?.requestContext?.http?.method ?? loose?.httpMethod),
    path: stringOr(loose?.rawPath ?? loose?.path),
    headers,
    body: bodyOf(loose, headers.get("content-length"), headers.get("content-encoding")),
  };
}

function stringOr(value: unknown): string {
  return typeof value === "string" ? value : "";
}

/**
 * A header sent twice is one list of values (RFC 9110 §5.3), whatever the case of its name: joined with
 * commas, as payload 2.0 does. Payload 1.0 writes each header twice, the last value in `headers` and all in
 * `multiValueHeaders`: a name found there is read from there only, so that no value counts twice.
 */
function headersOf(event: LooseEvent): Map<string, string> {
  const headers = new Map<string, string>();
  const add = (name: string, value: unknown) => {
    if (typeof value !== "string") return;
    const key = name.toLowerCase();
    const earlier = headers.get(key);
    headers.set(key, earlier === undefined ? value : `${earlier},${value}`);
  };
  const multiValueHeaders = isObject(event?.multiValueHeaders) ? event.multiValueHeaders : {};
  for (const [name, list] of Object.entries(multiValueHeaders)) {
    if (Array.isArray(list)) for (const value of list) add(name, value);
  }
  const fromMultiValue = new Set(headers.keys());
  for (const [name, value] of Object.entries(isObject(event?.headers) ? event.headers : {})) {
    if (!fromMultiValue.has(name.toLowerCase())) add(name, value);
  }
  return headers;
}

function bodyOf(
  event: LooseEvent,
  contentLength: string | undefined,
  contentEncoding: string | undefined,
): RequestBody | undefined {
  const body = event?.body;
  if (typeof body !== "string") return undefined;
  return event?.isBase64Encoded === true
    ? { encoding: "base64", base64: body, contentEncoding }
    : { encoding: "text", text: body, contentLength, contentEncoding };
}

export function toApiGatewayResult(response: ApiResponse): ApiGatewayResult {
  return {
    statusCode: response.status,
    headers: { "content-type": "application/json", ...response.headers },
    body: JSON.stringify(response.body),
    isBase64Encoded: false,
  };
}
