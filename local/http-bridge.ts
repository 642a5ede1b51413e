/**
 * What API Gateway's HTTP API does around a Lambda proxy integration (payload format 2.0): a Node HTTP
 * request becomes the event the function receives, and the function's result becomes the HTTP response.
 */
import { randomBytes, randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from "aws-lambda";

/** The event of API Gateway's HTTP API (payload format 2.0), as `@types/aws-lambda` types it. */
export type HttpApiEvent = APIGatewayProxyEventV2;
/** What the function (or the gateway itself) answers. */
export type HttpApiResult = APIGatewayProxyStructuredResultV2 & { statusCode: number };

/** API Gateway HTTP APIs refuse larger request bodies. */
export const MAX_REQUEST_BYTES = 10 * 1024 * 1024;

/**
 * Lambda runs a synchronous invoke of at most this many bytes of payload (the event, as JSON): API
 * Gateway answers a larger one with its own 500, and the function never runs.
 */
export const MAX_INVOKE_PAYLOAD_BYTES = 6 * 1024 * 1024;

/** The path and query exactly as the client sent them, as API Gateway's rawPath and rawQueryString. */
export function splitTarget(request: IncomingMessage): { rawPath: string; rawQueryString: string } {
  const [rawPath = "/", ...query] = (request.url ?? "/").split("?");
  return { rawPath, rawQueryString: query.join("?") };
}

/**
 * The request's body, or undefined when it is over `maxBytes`: such a body is read to its end all the
 * same, keeping nothing past the limit, since an answer sent while the client is still sending would
 * reach it as a reset, not as the answer.
 */
export async function readBody(
  request: IncomingMessage,
  maxBytes = MAX_REQUEST_BYTES,
): Promise<Buffer | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size <= maxBytes) chunks.push(chunk);
  }
  if (!request.complete) throw new Error("the client ended the request before the end of its body");
  return size > maxBytes ? undefined : Buffer.concat(chunks);
}

export function jsonResult(status: number, body: unknown): HttpApiResult {
  return { statusCode: status, headers: { "content-type": "application/json" }, body: JSON.stringify(body) };
}

export function toHttpApiEvent(
  request: IncomingMessage,
  body: Buffer,
  routeKey: string,
  requestId: string = randomUUID(),
): HttpApiEvent {
  const { rawPath, rawQueryString } = splitTarget(request);
  const headers: Record<string, string> = {};
  let cookies: string[] = [];
  // headersDistinct keeps every copy of a repeated header (plain `headers` drops some, like a second
  // Authorization); API Gateway joins them with commas, and moves the cookies to their own list.
  for (const [name, values] of Object.entries(request.headersDistinct)) {
    if (values === undefined) continue;
    if (name === "cookie") cookies = values.flatMap((value) => value.split(";").map((part) => part.trim()));
    else headers[name] = values.join(",");
  }
  const sourceIp = (request.socket.remoteAddress ?? "127.0.0.1").replace(/^::ffff:/, "");
  addForwardingHeaders(headers, request, sourceIp);
  const domainName = headers.host ?? "127.0.0.1";
  const now = new Date();
  const textual = isTextual(headers["content-type"]);
  const event: HttpApiEvent = {
    version: "2.0",
    routeKey,
    rawPath,
    rawQueryString,
    headers,
    requestContext: {
      accountId: "000000000000",
      apiId: "local",
      domainName,
      domainPrefix: domainName.split(".")[0] ?? domainName,
      http: {
        method: request.method ?? "GET",
        path: rawPath,
        protocol: `HTTP/${request.httpVersion}`,
        sourceIp,
        userAgent: headers["user-agent"] ?? "",
      },
      requestId,
      routeKey,
      stage: "$default",
      time: accessLogTime(now),
      timeEpoch: now.getTime(),
    },
    isBase64Encoded: body.length > 0 && !textual,
  };
  if (cookies.length > 0) event.cookies = cookies.filter((cookie) => cookie !== "");
  const query = queryParameters(rawQueryString);
  if (query) event.queryStringParameters = query;
  if (body.length > 0) event.body = body.toString(textual ? "utf8" : "base64");
  return event;
}

export function writeHttpApiResult(response: ServerResponse, result: HttpApiResult): void {
  const headers: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(result.headers ?? {}))
    headers[name.toLowerCase()] = String(value);
  if (result.cookies && result.cookies.length > 0) headers["set-cookie"] = result.cookies;
  const body = Buffer.from(result.body ?? "", result.isBase64Encoded ? "base64" : "utf8");
  headers["content-length"] = String(body.length);
  response.writeHead(result.statusCode, headers).end(body);
}

/**
 * The headers API Gateway adds to every request it passes on: the client's address appended to
 * X-Forwarded-For, the port and scheme it came in on (443 and https in AWS), and a fresh X-Ray trace id
 * (`1-<8 hex: epoch seconds>-<24 random hex>`), as API Gateway starts a trace.
 */
function addForwardingHeaders(headers: Record<string, string>, request: IncomingMessage, sourceIp: string) {
  headers["x-forwarded-for"] = headers["x-forwarded-for"]
    ? `${headers["x-forwarded-for"]}, ${sourceIp}`
    : sourceIp;
  headers["x-forwarded-port"] = String(request.socket.localPort ?? "");
  headers["x-forwarded-proto"] = "http";
  const epochHex = Math.floor(Date.now() / 1000).toString(16);
  headers["x-amzn-trace-id"] = `Root=1-${epochHex.padStart(8, "0")}-${randomBytes(12).toString("hex")}`;
}

/** The media types API Gateway passes as text; any other body (or one without a type) arrives base64-encoded. */
function isTextual(contentType: string | undefined): boolean {
  const mediaType = (contentType ?? "").split(";")[0]?.trim().toLowerCase() ?? "";
  return (
    mediaType.startsWith("text/") ||
    /^application\/(json|xml|javascript|[\w.+-]+\+(json|xml))$/.test(mediaType)
  );
}

function queryParameters(rawQueryString: string): Record<string, string> | undefined {
  if (rawQueryString === "") return undefined;
  const parameters: Record<string, string> = {};
  for (const [name, value] of new URLSearchParams(rawQueryString)) {
    parameters[name] = Object.hasOwn(parameters, name) ? `${parameters[name]},${value}` : value;
  }
  return parameters;
}

/** requestContext.time is in the access-log format: 22/Nov/2026:10:30:00 +0000. */
function accessLogTime(date: Date): string {
  const [, day, month, year, time] = date.toUTCString().split(" "); // Sun, 22 Nov 2026 10:30:00 GMT
  return `${day}/${month}/${year}:${time} +0000`;
}
