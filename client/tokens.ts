/**
 * Where the bearer token comes from: the OAuth client-credentials grant by oauth4webapi (Cognito's
 * /oauth2/token, the local run's, any RFC 6749 server), or a token or token function the caller brings.
 * What the library does not do is here: a token is kept until shortly before it expires, or until the API
 * refuses it (401 `invalid_token`), and fetched once for many concurrent calls; the grant's requests are
 * retried within the call's deadline; and its failures are PlantStoreErrors with the secret masked.
 */
import * as oauth from "oauth4webapi";
import { PlantStoreError, TokenEndpointError } from "./errors.ts";
import {
  exchange,
  type FetchFunction,
  failureOf,
  httpUrlOf,
  jsonObject,
  requestIdOf,
  unlessAborted,
} from "./http-exchange.ts";
import { basicCredentialForms, SecretMask } from "./masking.ts";
import { type RetryContext, requestWithRetries } from "./retry.ts";

/** An app client's credentials (Cognito's, or `<data dir>/client.json` of `npm start`). */
export interface ClientCredentials {
  clientId: string;
  clientSecret: string;
  /** The token endpoint, e.g. https://<domain>/oauth2/token: the URL that answers itself (no redirect is followed). */
  tokenUrl: string;
  /** Space-separated scopes to ask for; the endpoint's default (all the client may have) when absent. */
  scope?: string | undefined;
}

/**
 * What a token function gives: a token, kept for 5 minutes (its lifetime is unknown); or a token and
 * when it expires (a Date, or milliseconds since the epoch as Date.now() counts them), kept until shortly
 * before then (at most 24 hours). Either way a token the API refuses (401 `invalid_token`) is asked anew.
 */
export type TokenFunctionResult = string | { token: string; expiresAt?: Date | number | undefined };

/**
 * A token the caller brings: a fixed string, or a function asked for one before the first request, again
 * when the token it gave expires, and after the API refused it (401 `invalid_token`). A browser app uses
 * the function: it gets its token from its own backend or its sign-in, never from a client secret shipped
 * to the browser.
 */
export interface BearerToken {
  token: string | (() => TokenFunctionResult | Promise<TokenFunctionResult>);
}

export type Credentials = ClientCredentials | BearerToken;

/** @internal */
export interface TokenSource {
  /** A token, fetched (or waited for) until `deadlineAt` (clock time) at the latest. */
  token(deadlineAt: number): Promise<string>;
  /**
   * The API refused `token` as invalid (revoked, rotated, expired early): the next token() gives another.
   * False when no other can be had (a fixed token), so the caller does not ask again.
   */
  replace(token: string): boolean;
  /** The credentials that must never appear in an error: the secret and the tokens handed out. */
  readonly mask: SecretMask;
}

/** The client's settings and its signal: what every call shares. @internal */
export type TokenContext = Omit<RetryContext, "deadlineAt" | "what"> & { fetch: FetchFunction };

/** A token whose lifetime is unknown (no `expires_in`, an odd one, a string from a token function) is kept this long: Cognito's shortest access-token lifetime. @internal */
export const UNKNOWN_LIFETIME_MS = 5 * 60_000;
/** No token is kept longer, whatever its lifetime says: Cognito's longest access-token lifetime. @internal */
export const MAX_LIFETIME_MS = 24 * 60 * 60_000;
/** A token is replaced this long before it expires (or a tenth of its life, when that is shorter). @internal */
export const EXPIRY_MARGIN_MS = 60_000;
/** How many of the last tokens handed out are masked: a server may echo an older one. */
const MASKED_TOKENS = 8;
/** Milliseconds since the epoch before which an expiresAt is taken for seconds (a JWT's `exp`): 2001-09-09. */
const EARLIEST_EXPIRY_MS = 1e12;

/**
 * A bearer token as RFC 6750 §2.1 writes it (b64token), which the API's Authorization header takes: any
 * other would be refused by the API, or by fetch before sending (a line break).
 */
const BEARER_TOKEN = /^[A-Za-z0-9\-._~+/]+=*$/;
const NOT_A_BEARER_TOKEN =
  "is not a bearer token (RFC 6750: letters, digits and -._~+/, then any = signs); it is not shown";

/** A token and when it expires (clock time), when that is known. */
interface Granted {
  token: string;
  expiresAt?: number | undefined;
}

/** @internal */
export function tokenSourceFor(credentials: Credentials, context: TokenContext): TokenSource {
  if (typeof credentials !== "object" || credentials === null) {
    throw new TypeError("credentials must be { clientId, clientSecret, tokenUrl, scope? } or { token }");
  }
  if ("token" in credentials) {
    const { token } = credentials;
    if (typeof token === "function") {
      return cachedTokens(context, new SecretMask(), (deadlineAt) =>
        askTokenFunction(token, deadlineAt, context),
      );
    }
    if (typeof token !== "string" || token === "") {
      throw new TypeError("credentials.token must be a non-empty string or a function");
    }
    if (!BEARER_TOKEN.test(token)) throw new TypeError(`credentials.token ${NOT_A_BEARER_TOKEN}`);
    return { token: async () => token, replace: () => false, mask: new SecretMask([token]) };
  }
  for (const field of ["clientId", "clientSecret", "tokenUrl"] as const) {
    if (typeof credentials[field] !== "string" || credentials[field] === "") {
      throw new TypeError(`credentials.${field} must be a non-empty string`);
    }
  }
  httpUrlOf(credentials.tokenUrl, "credentials.tokenUrl", "https://auth.example.com/oauth2/token");
  if (credentials.scope !== undefined && typeof credentials.scope !== "string") {
    throw new TypeError("credentials.scope must be a string of space-separated scopes");
  }
  const { clientId, clientSecret } = credentials;
  const secretMask = new SecretMask([clientSecret], basicCredentialForms(clientId, clientSecret));
  const tokens = cachedTokens(context, secretMask, (deadlineAt) =>
    grantedToken(credentials, context, tokens.mask, deadlineAt),
  );
  return tokens;
}

/** Tokens kept until shortly before they expire, one fetch at a time for every caller. */
function cachedTokens(
  { clock }: TokenContext,
  baseMask: SecretMask,
  fetchToken: (deadlineAt: number) => Promise<Granted>,
): TokenSource {
  let recent: string[] = [];
  let cached: { token: string; refreshAt: number } | undefined;
  let inFlight: Promise<string> | undefined;
  const source = {
    mask: baseMask,
    replace(token: string) {
      if (cached?.token === token) cached = undefined;
      return true;
    },
    async token(deadlineAt: number) {
      if (cached !== undefined && clock.now() < cached.refreshAt) return cached.token;
      // One fetch in flight at a time: concurrent callers all wait for it. It ends by the deadline of the
      // call that started it, which (one client, one deadlineMs) is before the deadline of any that joined.
      inFlight ??= (async () => {
        const askedAt = clock.now();
        const { token, expiresAt } = await fetchToken(deadlineAt);
        if (!recent.includes(token)) {
          recent = [...recent, token].slice(-MASKED_TOKENS);
          source.mask = baseMask.with(...recent);
        }
        cached = { token, refreshAt: refreshTime(askedAt, expiresAt) };
        return token;
      })().finally(() => {
        inFlight = undefined;
      });
      return inFlight;
    },
  };
  return source;
}

/**
 * When a token asked for at `askedAt` is replaced: shortly before it expires, at most MAX_LIFETIME_MS
 * on, UNKNOWN_LIFETIME_MS on when its expiry is unknown; at once (it is used for one call) when it has
 * already expired.
 */
function refreshTime(askedAt: number, expiresAt: number | undefined): number {
  const lifetimeMs = Math.min(
    expiresAt === undefined ? UNKNOWN_LIFETIME_MS : expiresAt - askedAt,
    MAX_LIFETIME_MS,
  );
  return askedAt + lifetimeMs - Math.min(EXPIRY_MARGIN_MS, Math.abs(lifetimeMs) / 10);
}

/**
 * What the caller's token function gives, checked: a non-empty string, or { token, expiresAt? }. A
 * PlantStoreError once the call's deadline passes first, or the client's abort reason as soon as its
 * signal aborts (the function is not asked once it has).
 */
async function askTokenFunction(
  ask: () => TokenFunctionResult | Promise<TokenFunctionResult>,
  deadlineAt: number,
  { clock, signal }: TokenContext,
): Promise<Granted> {
  signal.throwIfAborted();
  const leftMs = Math.max(0, Math.floor(deadlineAt - clock.now()));
  const deadline = new AbortController();
  const message = `the token function gave no token within ${leftMs} ms, what was left of the call's deadline`;
  const timeout = new PlantStoreError(message, { kind: "timeout", attempts: 0 });
  const cancel = clock.setTimer(() => deadline.abort(timeout), leftMs);
  let given: unknown;
  try {
    given = await unlessAborted(Promise.resolve().then(ask), AbortSignal.any([signal, deadline.signal]));
  } finally {
    cancel();
  }
  const { token, expiresAt } = (typeof given === "string" ? { token: given } : (given ?? {})) as {
    token?: unknown;
    expiresAt?: unknown;
  };
  if (typeof token !== "string" || token === "") {
    throw new TypeError("the token function gave no token: give a non-empty string, or { token, expiresAt }");
  }
  if (!BEARER_TOKEN.test(token)) throw new TypeError(`the token function's token ${NOT_A_BEARER_TOKEN}`);
  const at = expiresAt instanceof Date ? expiresAt.getTime() : expiresAt;
  if (at !== undefined && (typeof at !== "number" || !Number.isFinite(at))) {
    throw new TypeError("the token function's expiresAt must be a Date or milliseconds since the epoch");
  }
  if (at !== undefined && at < EARLIEST_EXPIRY_MS) {
    throw new TypeError(
      `the token function's expiresAt ${at} looks like seconds (a JWT's exp): give milliseconds (exp * 1000) or a Date`,
    );
  }
  return { token, expiresAt: at };
}

/**
 * A token of the client-credentials grant, from the token URL itself (never a redirect's target): the
 * request and the check of a 200 are oauth4webapi's (HTTP Basic of the form-encoded id and secret, RFC
 * 6749 §2.3.1; a Bearer token), the retries and the failures' words ours. A timeout, a redirect or no
 * answer is a TokenEndpointError too, for `instanceof`.
 */
async function grantedToken(
  { tokenUrl, clientId, clientSecret, scope }: ClientCredentials,
  context: TokenContext,
  knownMask: SecretMask,
  deadlineAt: number,
): Promise<Granted> {
  const what = `token endpoint ${tokenUrl}`;
  const server = { issuer: new URL(tokenUrl).origin, token_endpoint: tokenUrl };
  const client = { client_id: clientId };
  try {
    // The client's signal alone: the calls waiting for this token may each give up, but not it for them.
    return await requestWithRetries({ ...context, what, deadlineAt }, async (signal) => {
      const requestedAt = context.clock.now();
      const endpoint = { what, option: "credentials.tokenUrl", fetch: context.fetch, mask: knownMask };
      const answer = await oauth.clientCredentialsGrantRequest(
        server,
        client,
        oauth.ClientSecretBasic(clientSecret),
        scope === undefined ? {} : { scope },
        {
          signal,
          [oauth.allowInsecureRequests]: true, // http: is refused or taken by httpUrlOf, as baseUrl is
          [oauth.customFetch]: (url, init) => exchange(endpoint, url, { ...init, body: String(init.body) }),
        },
      );
      const fields = jsonObject(await answer.clone().text());
      // A token in the answer, granted or not, is one to hide as well.
      const given = fields.access_token;
      const mask = typeof given === "string" && given !== "" ? knownMask.with(given) : knownMask;
      // The OAuth `error` and `error_description` (RFC 6749 §5.2), read here: the library reads none
      // behind a 401's `WWW-Authenticate` challenge.
      const words = (field: string, maxLength?: number) =>
        typeof fields[field] === "string" ? mask.excerpt(fields[field], maxLength) : undefined;
      if (answer.status !== 200) {
        throw failureOf(answer, { mask, clock: context.clock }, (status, details) => {
          const [oauthError, serverMessage] = [words("error", 100), words("error_description")];
          const said = `${oauthError ?? "without an OAuth error"}${serverMessage ? `: ${serverMessage}` : ""}`;
          return new TokenEndpointError(`${what} answered ${status} ${said}`, {
            ...details,
            serverMessage,
            tokenUrl,
            oauthError,
          });
        });
      }
      const unexpected = (reason: string) =>
        new TokenEndpointError(`${what} answered 200 ${reason}`, {
          kind: "unexpected-answer",
          status: 200,
          requestId: requestIdOf(answer.headers, mask),
          tokenUrl,
        });
      let granted: oauth.TokenEndpointResponse;
      try {
        granted = await oauth.processClientCredentialsResponse(server, client, answer);
      } catch (error) {
        // The library's words on what the 200 lacks, never its error (whose cause holds the body it read).
        const reason = mask.excerpt(error instanceof Error ? error.message : String(error));
        throw unexpected(`with no Bearer token: ${reason}`);
      }
      if (!BEARER_TOKEN.test(granted.access_token))
        throw unexpected("with a token that is not a bearer token");
      const lifetimeMs = Math.floor(granted.expires_in ?? 0) * 1000;
      const expiresAt = lifetimeMs >= 1000 ? requestedAt + lifetimeMs : undefined;
      return { token: granted.access_token, expiresAt };
    });
  } catch (error) {
    if (!(error instanceof PlantStoreError) || error instanceof TokenEndpointError) throw error;
    throw new TokenEndpointError(error.message, { ...error, tokenUrl });
  }
}
