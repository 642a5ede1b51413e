/**
 * The local run's `POST /oauth2/token`, answering like Cognito's token endpoint for a client-credentials
 * app client. The client authenticates with its id and secret by one method (RFC 6749 §2.3): HTTP Basic
 * (client_secret_basic) or `client_id` and `client_secret` in the form body (client_secret_post), both of
 * which Cognito takes. The body is a form with grant_type=client_credentials and an optional scope, each
 * parameter at most once (§3.2). It answers `{ access_token, expires_in, token_type: "Bearer" }`, or an
 * OAuth error body (§5.2) as Cognito does: 400 invalid_request, unsupported_grant_type, invalid_scope (a
 * scope the app client was not granted); 401 invalid_client, with a `WWW-Authenticate: Basic` challenge.
 * Two Authorization or Content-Type headers are invalid_request (§5.2: "includes multiple credentials").
 * A scope is a set (§3.3), so a scope asked twice is granted once.
 */
import { createHash, timingSafeEqual } from "node:crypto";
import type { IncomingMessage } from "node:http";
import { DEFAULT_REQUIRED_SCOPE } from "../lambda/defaults.ts";
import { type HttpApiResult, readBody } from "./http-bridge.ts";
import type { LocalClient } from "./local-client.ts";
import type { TokenIssuer } from "./token-issuer.ts";

export const TOKEN_PATH = "/oauth2/token";
/** What the local client may ask for, and gets when it names no scope. */
const LOCAL_CLIENT_SCOPES: readonly string[] = [DEFAULT_REQUIRED_SCOPE];
/** Cognito's default access-token lifetime. */
const TOKEN_LIFETIME_SECONDS = 3600;
/** A token request is a short form; a larger one is read to its end, then refused with an OAuth error. */
const MAX_TOKEN_REQUEST_BYTES = 16 * 1024;

type OAuthErrorCode = "invalid_request" | "invalid_client" | "unsupported_grant_type" | "invalid_scope";

export async function answerTokenRequest(
  request: IncomingMessage,
  client: LocalClient,
  issuer: TokenIssuer,
): Promise<HttpApiResult> {
  const body = await readBody(request, MAX_TOKEN_REQUEST_BYTES);
  // Every copy of a repeated header, as /plants sees them; an empty Authorization counts as none.
  const authorization = (request.headersDistinct.authorization ?? []).filter((value) => value !== "");
  const contentType = request.headersDistinct["content-type"] ?? [];
  if (body === undefined || authorization.length > 1 || contentType.length > 1) {
    return oauthError("invalid_request");
  }
  const mediaType = contentType[0]?.split(";")[0]?.trim().toLowerCase();
  if (mediaType !== "application/x-www-form-urlencoded") return oauthError("invalid_request");
  const form = new URLSearchParams(body.toString("utf8"));
  const names = [...form.keys()];
  if (new Set(names).size !== names.length) return oauthError("invalid_request");
  const bodySecret = form.get("client_secret") ?? undefined;
  const bodyClientId = form.get("client_id") ?? undefined;
  // Two methods at once (§2.3), or a Basic header that is not `Basic <base64 of id:secret>`.
  if (authorization[0] !== undefined && bodySecret !== undefined) return oauthError("invalid_request");
  const credentials =
    authorization[0] === undefined ? { id: bodyClientId, secret: bodySecret } : basic(authorization[0]);
  if (credentials === undefined) return oauthError("invalid_request");
  const { id, secret } = credentials;
  const known = id === client.clientId && (bodyClientId === undefined || bodyClientId === id);
  if (!known || secret === undefined) return oauthError("invalid_client");
  if (!sameSecret(secret, client.clientSecret)) return oauthError("invalid_client");
  const grantType = form.get("grant_type");
  if (grantType === null) return oauthError("invalid_request");
  if (grantType !== "client_credentials") return oauthError("unsupported_grant_type");
  // §3.1: a parameter sent without a value is as if it were not sent.
  const scopeValue = form.get("scope") || undefined;
  const asked = scopeValue === undefined ? LOCAL_CLIENT_SCOPES : [...new Set(scopeValue.split(" "))];
  if (asked.some((scope) => !LOCAL_CLIENT_SCOPES.includes(scope))) return oauthError("invalid_scope");
  const accessToken = await issuer.mint({
    scope: asked.join(" "),
    clientId: client.clientId,
    subject: client.clientId,
    expiresInSeconds: TOKEN_LIFETIME_SECONDS,
  });
  return answer(200, { access_token: accessToken, expires_in: TOKEN_LIFETIME_SECONDS, token_type: "Bearer" });
}

/**
 * HTTP Basic's id and secret, each form-encoded first (RFC 6749 §2.3.1); `{}` for another scheme (no
 * credentials: invalid_client), undefined for a Basic header that cannot be read (invalid_request).
 */
function basic(authorization: string): { id?: string; secret?: string } | undefined {
  const [scheme = "", encoded = "", ...rest] = authorization.split(" ");
  if (scheme.toLowerCase() !== "basic") return {};
  const decoded = Buffer.from(encoded, "base64").toString("utf8");
  const colon = decoded.indexOf(":");
  if (rest.length > 0 || colon === -1) return undefined;
  try {
    return { id: formDecode(decoded.slice(0, colon)), secret: formDecode(decoded.slice(colon + 1)) };
  } catch {
    return undefined;
  }
}

function formDecode(value: string): string {
  return decodeURIComponent(value.replaceAll("+", " "));
}

/** Compared in constant time, as digests of equal length. */
function sameSecret(given: string, expected: string): boolean {
  const digest = (value: string) => createHash("sha256").update(value).digest();
  return timingSafeEqual(digest(given), digest(expected));
}

/** An OAuth error body (RFC 6749 §5.2): 401 with the Basic challenge for invalid_client, else 400. */
export function oauthError(error: OAuthErrorCode): HttpApiResult {
  if (error !== "invalid_client") return answer(400, { error });
  return answer(401, { error }, { "www-authenticate": 'Basic realm="oauth2/token", charset="UTF-8"' });
}

function answer(status: number, body: unknown, headers: Record<string, string> = {}): HttpApiResult {
  // A token answer is never cached (RFC 6749 §5.1).
  const noStore = { "content-type": "application/json", "cache-control": "no-store", pragma: "no-cache" };
  return { statusCode: status, headers: { ...noStore, ...headers }, body: JSON.stringify(body) };
}
