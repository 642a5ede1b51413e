/**
 * The local run's `POST /oauth2/token`, answering like Cognito's token endpoint for a client-credentials
 * app client. The client authenticates with its id and secret by one method (RFC 6749 §2.3): HTTP Basic
 * (client_secret_basic) or `client_id` and `client_secret` in the form body (client_secret_post), both of
 * which Cognito takes. The body is a form with grant_type=client_credentials and an optional scope, each
 * parameter at most once (§3.2). It answers `{ access_token, expires_in, token_type: "Bearer" }`, or an
 * OAuth error body (§5.2) as Cognito does: 400 invalid_request, unsupported_grant_type, invalid_scope (a
 * scope the app client was not granted: Cognito refuses it rather than leaving it out); 401
 * invalid_client, with a `WWW-Authenticate: Basic` challenge (RFC 9110 §15.5.2).
 *
 * As strict on headers as /plants: two Authorization or Content-Type headers are invalid_request (§5.2:
 * "includes multiple credentials"). Basic is exactly `Basic`, one space and the padded standard base64 of
 * RFC 4648 §4 that RFC 7617 §2 names (the scheme's name in any case, RFC 9110 §11.1); anything else
 * naming the scheme (a tab or two spaces after it, unpadded or base64url text) is invalid_request, not a
 * guess. A scope is a set (§3.3: each string adds an access range, in any order), so a scope asked twice is
 * granted once; a scope value that is not `scope-token *( SP scope-token )` is invalid_scope.
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
/** A token request is a short form; a larger one is refused unread, with an OAuth error. */
export const MAX_TOKEN_REQUEST_BYTES = 16 * 1024;
/** The challenge of every 401: the client authenticates with HTTP Basic (RFC 6749 §2.3.1). */
const TOKEN_ENDPOINT_CHALLENGE = 'Basic realm="oauth2/token", charset="UTF-8"';

export interface TokenRequest {
  /** Every Authorization header the request carries, in order (an empty one counts as none). */
  authorization: readonly string[];
  /** Every Content-Type header, likewise. */
  contentType: readonly string[];
  body: string;
}

type OAuthErrorCode = "invalid_request" | "invalid_client" | "unsupported_grant_type" | "invalid_scope";

export async function answerTokenRequest(
  request: TokenRequest,
  client: LocalClient,
  issuer: TokenIssuer,
): Promise<HttpApiResult> {
  const authorization = request.authorization.filter((value) => value !== "");
  if (authorization.length > 1 || request.contentType.length > 1) return oauthError("invalid_request");
  const mediaType = request.contentType[0]?.split(";")[0]?.trim().toLowerCase();
  if (mediaType !== "application/x-www-form-urlencoded") return oauthError("invalid_request");
  const form = new URLSearchParams(request.body);
  const names = [...form.keys()];
  if (new Set(names).size !== names.length) return oauthError("invalid_request");
  const authentication = clientAuthentication(authorization[0], form);
  if (authentication === "malformed") return oauthError("invalid_request");
  if (authentication === undefined || !authenticates(authentication, client)) {
    return oauthError("invalid_client");
  }
  const grantType = form.get("grant_type");
  if (grantType === null) return oauthError("invalid_request");
  if (grantType !== "client_credentials") return oauthError("unsupported_grant_type");
  // §3.1: a parameter sent without a value is as if it were not sent.
  const scopeValue = form.get("scope") || undefined;
  const asked = scopeValue === undefined ? LOCAL_CLIENT_SCOPES : scopesOf(scopeValue);
  if (asked === undefined || asked.some((scope) => !LOCAL_CLIENT_SCOPES.includes(scope))) {
    return oauthError("invalid_scope");
  }
  const scope = asked.join(" ");
  const accessToken = await issuer.mint({
    scope,
    clientId: client.clientId,
    subject: client.clientId,
    expiresInSeconds: TOKEN_LIFETIME_SECONDS,
  });
  return answer(200, { access_token: accessToken, expires_in: TOKEN_LIFETIME_SECONDS, token_type: "Bearer" });
}

interface ClientAuthentication {
  clientId: string;
  clientSecret: string;
  /** A client_id in the body besides Basic, which must name the same client. */
  bodyClientId?: string | undefined;
}

/**
 * The id and secret the request authenticates with, by HTTP Basic or in the body; undefined when it sends
 * none (or another scheme than Basic), "malformed" for two methods at once or a Basic header that is not
 * exactly one `Basic <padded base64>`.
 */
function clientAuthentication(
  authorization: string | undefined,
  form: URLSearchParams,
): ClientAuthentication | "malformed" | undefined {
  const bodySecret = form.get("client_secret") ?? undefined;
  const bodyClientId = form.get("client_id") ?? undefined;
  if (authorization !== undefined) {
    if (bodySecret !== undefined) return "malformed"; // two methods at once (§2.3)
    if (!NAMES_BASIC_SCHEME.test(authorization)) return undefined;
    const basic = basicCredentials(authorization);
    return basic ? { ...basic, bodyClientId } : "malformed";
  }
  if (bodySecret === undefined || bodyClientId === undefined) return undefined;
  return { clientId: bodyClientId, clientSecret: bodySecret };
}

/** The Basic scheme named at the start of the value, followed by anything or nothing. */
const NAMES_BASIC_SCHEME = /^Basic(?![!#$%&'*+\-.^_`|~0-9A-Za-z])/i;
/** `Basic`, one space, padded standard base64 (RFC 7617 §2, RFC 4648 §4); Node has trimmed the value. */
const BASIC_CREDENTIALS = /^Basic ((?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?)$/i;

/** HTTP Basic with the client's id and secret, each form-encoded first (RFC 6749 §2.3.1). */
function basicCredentials(authorization: string): { clientId: string; clientSecret: string } | undefined {
  const encoded = BASIC_CREDENTIALS.exec(authorization)?.[1];
  if (!encoded) return undefined;
  const bytes = Buffer.from(encoded, "base64");
  // Padding bits that are not zero: the text is not what encoding any bytes gives.
  if (bytes.toString("base64") !== encoded) return undefined;
  const decoded = bytes.toString("utf8");
  const colon = decoded.indexOf(":");
  if (colon === -1) return undefined;
  try {
    return {
      clientId: formDecode(decoded.slice(0, colon)),
      clientSecret: formDecode(decoded.slice(colon + 1)),
    };
  } catch {
    return undefined;
  }
}

/** RFC 6749 §3.3: scope-token *( SP scope-token ), each token once; undefined when malformed. */
function scopesOf(value: string): string[] | undefined {
  if (!/^[\x21\x23-\x5B\x5D-\x7E]+(?: [\x21\x23-\x5B\x5D-\x7E]+)*$/.test(value)) return undefined;
  return [...new Set(value.split(" "))];
}

function authenticates({ clientId, clientSecret, bodyClientId }: ClientAuthentication, client: LocalClient) {
  if (bodyClientId !== undefined && bodyClientId !== clientId) return false;
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

/** An OAuth error body (RFC 6749 §5.2): 401 with the Basic challenge for invalid_client, else 400. */
export function oauthError(error: OAuthErrorCode): HttpApiResult {
  const result = answer(error === "invalid_client" ? 401 : 400, { error });
  if (error === "invalid_client") {
    return { ...result, headers: { ...result.headers, "www-authenticate": TOKEN_ENDPOINT_CHALLENGE } };
  }
  return result;
}

function answer(status: number, body: unknown): HttpApiResult {
  return {
    statusCode: status,
    // A token answer is never cached (RFC 6749 §5.1).
    headers: { "content-type": "application/json", "cache-control": "no-store", pragma: "no-cache" },
    body: JSON.stringify(body),
  };
}
