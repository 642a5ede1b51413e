/**
 * The local run's `POST /oauth2/token`, answering like Cognito's token endpoint for a client-credentials
 * app client: HTTP Basic with the client id and secret, a form body with grant_type=client_credentials
 * and an optional scope; `{ access_token, expires_in, token_type: "Bearer" }`, or Cognito's errors
 * (400 invalid_request, unsupported_grant_type, invalid_scope; 401 invalid_client).
 */
import { createHash, timingSafeEqual } from "node:crypto";
import { DEFAULT_REQUIRED_SCOPE } from "../lambda/defaults.ts";
import type { HttpApiResult } from "./http-bridge.ts";
import type { LocalClient } from "./local-client.ts";
import type { TokenIssuer } from "./token-issuer.ts";

export const TOKEN_PATH = "/oauth2/token";
/** What the local client may ask for, and gets when it names no scope. */
export const LOCAL_CLIENT_SCOPES: readonly string[] = [DEFAULT_REQUIRED_SCOPE];
/** Cognito's default access-token lifetime. */
export const TOKEN_LIFETIME_SECONDS = 3600;

export interface TokenRequest {
  authorization: string | undefined;
  contentType: string | undefined;
  body: string;
}

export async function answerTokenRequest(
  request: TokenRequest,
  client: LocalClient,
  issuer: TokenIssuer,
): Promise<HttpApiResult> {
  const mediaType = request.contentType?.split(";")[0]?.trim().toLowerCase();
  if (mediaType !== "application/x-www-form-urlencoded") return oauthError(400, "invalid_request");
  if (!authenticates(request.authorization, client)) return oauthError(401, "invalid_client");
  const form = new URLSearchParams(request.body);
  const grantType = form.get("grant_type");
  if (grantType === null || form.getAll("grant_type").length > 1) return oauthError(400, "invalid_request");
  if (grantType !== "client_credentials") return oauthError(400, "unsupported_grant_type");
  const asked = form
    .get("scope")
    ?.split(" ")
    .filter((scope) => scope !== "");
  if (asked?.some((scope) => !LOCAL_CLIENT_SCOPES.includes(scope))) return oauthError(400, "invalid_scope");
  const scope = (asked?.length ? asked : LOCAL_CLIENT_SCOPES).join(" ");
  const accessToken = await issuer.mint({
    scope,
    clientId: client.clientId,
    subject: client.clientId,
    expiresInSeconds: TOKEN_LIFETIME_SECONDS,
  });
  return answer(200, { access_token: accessToken, expires_in: TOKEN_LIFETIME_SECONDS, token_type: "Bearer" });
}

/** HTTP Basic with the client's id and secret, each form-encoded first (RFC 6749 §2.3.1). */
function authenticates(authorization: string | undefined, client: LocalClient): boolean {
  const match = /^Basic\s+([A-Za-z0-9+/]+={0,2})\s*$/i.exec(authorization ?? "");
  if (!match?.[1]) return false;
  const decoded = Buffer.from(match[1], "base64").toString("utf8");
  const colon = decoded.indexOf(":");
  if (colon === -1) return false;
  let clientId: string;
  let clientSecret: string;
  try {
    clientId = formDecode(decoded.slice(0, colon));
    clientSecret = formDecode(decoded.slice(colon + 1));
  } catch {
    return false;
  }
  return clientId === client.clientId && sameSecret(clientSecret, client.clientSecret);
}

function formDecode(value: string): string {
  return decodeURIComponent(value.replaceAll("+", " "));
}

/** Compared in constant time, as digests of equal length. */
function sameSecret(given: string, expected: string): boolean {
  const digest = (value: string) => createHash("sha256").update(value).digest();
  return timingSafeEqual(digest(given), digest(expected));
}

function oauthError(status: 400 | 401, error: string): HttpApiResult {
  return answer(status, { error });
}

function answer(status: number, body: unknown): HttpApiResult {
  return {
    statusCode: status,
    // A token answer is never cached (RFC 6749 §5.1).
    headers: { "content-type": "application/json", "cache-control": "no-store", pragma: "no-cache" },
    body: JSON.stringify(body),
  };
}
