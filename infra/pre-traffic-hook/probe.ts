import type { APIGatewayProxyEventV2 } from "aws-lambda";
import { ROUTES, routeKey } from "../../lambda/http/routes.ts";

/**
 * The request the pre-traffic hook sends the new version, as the HTTP API would deliver it (payload 2.0):
 * the first route, with no Authorization header. It walks the version's init (configuration read at cold
 * start), its routing and its token check, and writes nothing: the body is not a NewPlant either, so even
 * a version that skipped the token check would refuse it instead of storing it.
 */
export function noTokenProbeEvent(requestId: string, now: Date): APIGatewayProxyEventV2 {
  const [route] = ROUTES;
  const body = "{}";
  return {
    version: "2.0",
    routeKey: routeKey(route),
    rawPath: route.path,
    rawQueryString: "",
    headers: {
      "content-type": "application/json",
      "content-length": String(Buffer.byteLength(body)),
      "user-agent": PROBE_USER_AGENT,
    },
    requestContext: {
      accountId: "anonymous",
      apiId: "pre-traffic-hook",
      domainName: "pre-traffic-hook.invalid",
      domainPrefix: "pre-traffic-hook",
      http: {
        method: route.method,
        path: route.path,
        protocol: "HTTP/1.1",
        sourceIp: "127.0.0.1",
        userAgent: PROBE_USER_AGENT,
      },
      requestId,
      routeKey: routeKey(route),
      stage: "$default",
      time: now.toISOString(),
      timeEpoch: now.getTime(),
    },
    body,
    isBase64Encoded: false,
  };
}

/** How the probe shows in the function's log lines. */
export const PROBE_USER_AGENT = "plant-store-pre-traffic-hook";

/** What Lambda's Invoke gave back: the function's error type when it failed, else its answer's bytes. */
export interface ProbeInvocation {
  /** `Unhandled` (or `Handled`) when the function threw, timed out or failed its init. */
  readonly functionError: string | undefined;
  readonly payload: string;
}

export type ProbeVerdict = { readonly passed: true } | { readonly passed: false; readonly reason: string };

/**
 * Whether the new version answered the probe as the API promises an unauthenticated request: 401, a
 * `WWW-Authenticate: Bearer` challenge, and the Error body `{"error": 401, …}`. Anything else (a crash, a
 * failed init, a 5xx of a missing setting, a 2xx of a version that lets a request without a token through)
 * fails the deployment before any traffic reaches that version.
 */
export function judgeProbeAnswer({ functionError, payload }: ProbeInvocation): ProbeVerdict {
  if (functionError !== undefined) {
    return { passed: false, reason: `the new version failed (${functionError}): ${excerpt(payload)}` };
  }
  const answer = parseJson(payload) as
    | { statusCode?: unknown; headers?: unknown; body?: unknown }
    | undefined;
  if (answer === undefined || typeof answer !== "object" || answer === null) {
    return {
      passed: false,
      reason: `the new version's answer is not an API Gateway result: ${excerpt(payload)}`,
    };
  }
  if (answer.statusCode !== 401) {
    return { passed: false, reason: `a request without a token got ${String(answer.statusCode)}, not 401` };
  }
  const challenge = headerValue(answer.headers, "www-authenticate");
  if (challenge === undefined || !/^Bearer(\s|$)/i.test(challenge)) {
    return { passed: false, reason: "the 401 carries no WWW-Authenticate: Bearer challenge" };
  }
  const body = typeof answer.body === "string" ? parseJson(answer.body) : undefined;
  if ((body as { error?: unknown } | undefined)?.error !== 401) {
    return { passed: false, reason: "the 401's body is not the API's Error body with error 401" };
  }
  return { passed: true };
}

function headerValue(headers: unknown, name: string): string | undefined {
  if (typeof headers !== "object" || headers === null) return undefined;
  const entry = Object.entries(headers).find(([key]) => key.toLowerCase() === name);
  return typeof entry?.[1] === "string" ? entry[1] : undefined;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** The start of a payload for a failure reason: CodeDeploy shows it, and it never holds a token. */
function excerpt(payload: string): string {
  return payload.length > 300 ? `${payload.slice(0, 300)}…` : payload;
}
