import type { RequestBody } from "../request/parse-new-plant.ts";

/** The parts of an API Gateway proxy event this API reads: HTTP API payload 2.0, or REST/payload 1.0. */
export interface ApiGatewayEvent {
  version?: string;
  headers?: Record<string, string | undefined> | null;
  multiValueHeaders?: Record<string, string[] | undefined> | null;
  body?: string | null;
  isBase64Encoded?: boolean;
  httpMethod?: string;
  requestContext?: { requestId?: string; http?: { method?: string } } | null;
}

export interface ApiGatewayResult {
  statusCode: number;
  headers: Record<string, string>;
  body: string;
  isBase64Encoded: false;
}

export interface LambdaContext {
  awsRequestId?: string;
}

/** An HTTP request as the endpoint sees it: header names lower-cased, the body decoded. */
export interface HttpRequest {
  requestId: string;
  headers: Map<string, string>;
  body: RequestBody;
}

export interface HttpResponse {
  status: number;
  headers?: Record<string, string>;
  body: unknown;
}

export function toHttpRequest(
  event: ApiGatewayEvent | null | undefined,
  context?: LambdaContext,
): HttpRequest {
  const requestId = event?.requestContext?.requestId ?? context?.awsRequestId ?? "unknown";
  return { requestId, headers: headersOf(event), body: bodyOf(event) };
}

/**
 * Header names are case-insensitive. Payload 2.0 joins repeated headers with commas already; for
 * payload 1.0 the multi-value form is joined the same way, so both versions read alike.
 */
function headersOf(event: ApiGatewayEvent | null | undefined): Map<string, string> {
  const headers = new Map<string, string>();
  for (const [name, value] of Object.entries(event?.headers ?? {})) {
    if (typeof value === "string") headers.set(name.toLowerCase(), value);
  }
  for (const [name, values] of Object.entries(event?.multiValueHeaders ?? {})) {
    if (Array.isArray(values) && values.length > 0) headers.set(name.toLowerCase(), values.join(","));
  }
  return headers;
}

function bodyOf(event: ApiGatewayEvent | null | undefined): RequestBody {
  const body = event?.body;
  if (typeof body !== "string") return undefined;
  return event?.isBase64Encoded ? Buffer.from(body, "base64") : body;
}

export function toApiGatewayResult(response: HttpResponse): ApiGatewayResult {
  return {
    statusCode: response.status,
    headers: { "content-type": "application/json", ...response.headers },
    body: JSON.stringify(response.body),
    isBase64Encoded: false,
  };
}
