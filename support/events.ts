import type { APIGatewayProxyEvent, APIGatewayProxyEventV2 } from "aws-lambda";
import type { ApiGatewayEvent } from "../lambda/http/api-gateway.ts";
import httpApiV2 from "./fixtures/http-api-v2-event.json" with { type: "json" };
import restApiV1 from "./fixtures/rest-api-v1-event.json" with { type: "json" };

export type PayloadVersion = "1.0" | "2.0";
export const PAYLOAD_VERSIONS: PayloadVersion[] = ["2.0", "1.0"];

export interface EventOptions {
  body?: string | undefined;
  headers?: Record<string, string>;
  /** Drop these headers of the fixture (any case). */
  withoutHeaders?: string[];
  base64?: boolean;
  token?: string;
  /** The request's method and path (undecoded), for a route other than the fixture's `POST /plants`. */
  method?: string;
  path?: string;
}

/**
 * An API Gateway event built from a captured one: payload 2.0 (HTTP API) or 1.0 (REST API), with
 * the headers, body and bearer token a test asks for, written as each payload version writes them.
 */
export function apiGatewayEvent(version: PayloadVersion, options: EventOptions = {}): ApiGatewayEvent {
  const fixture = structuredClone(version === "2.0" ? httpApiV2 : restApiV1) as ApiGatewayEvent & {
    headers: Record<string, string>;
  };
  const drop = new Set((options.withoutHeaders ?? []).map((name) => name.toLowerCase()));
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(fixture.headers)) {
    if (!drop.has(name.toLowerCase())) headers[name] = value;
  }
  if (options.token !== undefined)
    headers[version === "2.0" ? "authorization" : "Authorization"] = `Bearer ${options.token}`;
  for (const [name, value] of Object.entries(options.headers ?? {})) {
    headers[version === "2.0" ? name.toLowerCase() : name] = value;
  }
  const body = "body" in options ? options.body : (fixture.body ?? undefined);
  const encodedBody =
    body === undefined || body === null
      ? undefined
      : options.base64
        ? Buffer.from(body).toString("base64")
        : body;
  const isBase64Encoded = options.base64 === true;
  if (version === "2.0") {
    const v2 = fixture as APIGatewayProxyEventV2;
    const { method = v2.requestContext.http.method, path = v2.rawPath } = options;
    const http = { ...v2.requestContext.http, method, path };
    return {
      ...v2,
      rawPath: path,
      requestContext: { ...v2.requestContext, http },
      headers,
      body: encodedBody,
      isBase64Encoded,
    };
  }
  const v1 = fixture as unknown as APIGatewayProxyEvent;
  return {
    ...v1,
    httpMethod: options.method ?? v1.httpMethod,
    path: options.path ?? v1.path,
    headers,
    multiValueHeaders: Object.fromEntries(Object.entries(headers).map(([name, value]) => [name, [value]])),
    body: encodedBody ?? null,
    isBase64Encoded,
  };
}
