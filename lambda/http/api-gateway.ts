import type {
  APIGatewayProxyEvent,
  APIGatewayProxyEventV2,
  APIGatewayProxyStructuredResultV2,
  Context,
} from "aws-lambda";
import type { RequestBody } from "../request/parse-new-plant.ts";

/** What API Gateway invokes the function with: an HTTP API (payload 2.0) or a REST API (payload 1.0) event. */
export type ApiGatewayEvent = APIGatewayProxyEventV2 | APIGatewayProxyEvent;

/** What the function returns to API Gateway: always the structured form, with a JSON body. */
export type ApiGatewayResult = APIGatewayProxyStructuredResultV2 & {
  statusCode: number;
  headers: Record<string, string>;
  body: string;
  isBase64Encoded: false;
};

/** The incoming API request as the endpoint sees it: header names lower-cased, the body decoded. */
export interface ApiRequest {
  requestId: string;
  headers: Map<string, string>;
  body: RequestBody;
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
  const requestId = loose?.requestContext?.requestId ?? context?.awsRequestId ?? "unknown";
  return { requestId, headers: headersOf(loose), body: bodyOf(loose) };
}

/**
 * Header names are case-insensitive. Payload 2.0 joins repeated headers with commas already; for
 * payload 1.0 the multi-value form is joined the same way, so both versions read alike.
 */
function headersOf(event: LooseEvent): Map<string, string> {
  const headers = new Map<string, string>();
  for (const [name, value] of Object.entries(event?.headers ?? {})) {
    if (typeof value === "string") headers.set(name.toLowerCase(), value);
  }
  for (const [name, values] of Object.entries(event?.multiValueHeaders ?? {})) {
    if (Array.isArray(values) && values.length > 0) headers.set(name.toLowerCase(), values.join(","));
  }
  return headers;
}

function bodyOf(event: LooseEvent): RequestBody {
  const body = event?.body;
  if (typeof body !== "string") return undefined;
  return event?.isBase64Encoded ? Buffer.from(body, "base64") : body;
}

export function toApiGatewayResult(response: ApiResponse): ApiGatewayResult {
  return {
    statusCode: response.status,
    headers: { "content-type": "application/json", ...response.headers },
    body: JSON.stringify(response.body),
    isBase64Encoded: false,
  };
}
