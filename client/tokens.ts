/**
 * Where the bearer token comes from: the OAuth client-credentials grant (what Cognito's /oauth2/token
 * and the local run's take), cached until shortly before it expires and fetched once for many
 * concurrent calls; or a token the caller brings.
 */
import type { Clock } from "../lambda/clock.ts";
import type { RetryQuota } from "../lambda/retry/standard-retry.ts";
import {
  base64,
  credentialForms,
  formEncoded,
  masked,
  maskedExcerpt,
  PlantStoreError,
  type PlantStoreErrorDetails,
  TokenEndpointError,
} from "./errors.ts";
import {
  type Exchange,
  exchange,
  type FetchFunction,
  maskedRequestId,
  retryAfterMs,
  secondsOf,
} from "./http-exchange.ts";
import { jsonFields } from "./plant-json.ts";
import { RETRYABLE_STATUSES, RetryableFailure, type RetryPolicy, requestWithRetries } from "./retry.ts";

/** An app client's credentials (Cognito's, or `<data dir>/client.json` of `npm start`). */
export interface ClientCredentials {
  clientId: string;
  clientSecret: string;
  /** The token endpoint, e.g. https://<domain>/oauth2/token. */
  tokenUrl: string;
  /** Space-separated scopes to ask for; the endpoint's default (all the client may have) when absent. */
  scope?: string | undefined;
}

/**
 * A token the caller brings: a string, or a function asked before each request (and once more on a 401).
 * A browser app uses the function: it gets its token from its own backend or its sign-in, never from a
 * client secret shipped to the browser.
 */
export interface BearerToken {
  token: string | (() => Promise<string>);
}

export type Credentials = ClientCredentials | BearerToken;

export interface TokenSource {
  /** A token, fetched (or waited for) until `deadlineAt` (clock time) at the latest. */
  token(deadlineAt: number): Promise<string>;
  /**
   * The API refused `token` as invalid (revoked, rotated, expired early): the next token() gives another.
   * False when no other can be had (a fixed token), so the caller does not ask again.
   */
  replace(token: string): boolean;
  /** Credentials that must never appear in an error, in every form a server might echo them. */
  readonly secrets: readonly string[];
}

export interface TokenContext {
  fetch: FetchFunction;
  clock: Clock;
  random: () => number;
  policy: RetryPolicy;
  quota: RetryQuota;
  signal?: AbortSignal | undefined;
}

/** A token is used until this long before it expires (or a tenth of its life, when that is shorter). */
const TOKEN_EXPIRY_MARGIN_MS = 60_000;

export function tokenSourceFor(credentials: Credentials, context: TokenContext): TokenSource {
  if (typeof credentials !== "object" || credentials === null) {
    throw new TypeError("credentials must be { clientId, clientSecret, tokenUrl, scope? } or { token }");
  }
  if ("token" in credentials) return bearerTokenSource(credentials.token, context.clock);
  for (const field of ["clientId", "clientSecret", "tokenUrl"] as const) {
    if (typeof credentials[field] !== "string" || credentials[field] === "") {
      throw new TypeError(`credentials.${field} must be a non-empty string`);
    }
  }
  return new ClientCredentialsTokens(credentials, context);
}

function bearerTokenSource(token: string | (() => Promise<string>), clock: Clock): TokenSource {
  if (typeof token === "string") {
    return { token: async () => token, replace: () => false, secrets: credentialForms(token) };
  }
  const secrets = new RecentSecrets();
  return {
    async token(deadlineAt) {
      const value = await untilDeadline(token, deadlineAt, clock);
      if (typeof value !== "string" || value === "") throw new TypeError("the token function gave no token");
      secrets.add(value);
      return value;
    },
    replace: () => true,
    secrets: secrets.forms,
  };
}

/** What the caller's token function gives, or a PlantStoreError once the call's deadline passes first. */
async function untilDeadline(ask: () => Promise<string>, deadlineAt: number, clock: Clock): Promise<string> {
  const leftMs = Math.floor(deadlineAt - clock.now());
  if (leftMs < 1) {
    throw new PlantStoreError("the token function was not asked: the call's deadline had passed", {
      attempts: 0,
    });
  }
  return new Promise((resolve, reject) => {
    const cancel = clock.setTimer(() => {
      reject(
        new PlantStoreError(
          `the token function gave no token within ${leftMs} ms, what was left of the call's deadline`,
          { attempts: 0 },
        ),
      );
    }, leftMs);
    ask().then(
      (value) => {
        cancel();
        resolve(value);
      },
      (error: unknown) => {
        cancel();
        reject(error);
      },
    );
  });
}

/** The forms of the last few tokens handed out, for masking: a server may echo an older one. */
class RecentSecrets {
  readonly forms: string[] = [];
  private readonly recent: string[] = [];

  constructor(private readonly fixed: readonly string[] = []) {
    this.forms.push(...fixed);
  }

  add(token: string): void {
    if (this.recent.includes(token)) return;
    this.recent.push(token);
    if (this.recent.length > 8) this.recent.shift();
    this.forms.splice(0, this.forms.length, ...this.fixed, ...this.recent.flatMap(credentialForms));
  }
}

interface CachedToken {
  token: string;
  /** Clock time after which a new one is fetched. */
  refreshAt: number;
}

class ClientCredentialsTokens implements TokenSource {
  private readonly recent: RecentSecrets;
  /** The Basic credentials of the token request (RFC 6749 §2.3.1): form-encoded id and secret, joined, base64. */
  private readonly basicCredential: string;
  private cached: CachedToken | undefined;
  private inFlight: Promise<CachedToken> | undefined;

  constructor(
    private readonly credentials: ClientCredentials,
    private readonly context: TokenContext,
  ) {
    const { clientId, clientSecret } = credentials;
    this.basicCredential = base64(`${formEncoded(clientId)}:${formEncoded(clientSecret)}`);
    // The secret, and the Basic credentials made of it (see tokenRequestInit), as an echoed header shows them.
    this.recent = new RecentSecrets([
      ...credentialForms(clientSecret),
      this.basicCredential,
      base64(`${clientId}:${clientSecret}`),
    ]);
  }

  get secrets(): readonly string[] {
    return this.recent.forms;
  }

  async token(deadlineAt: number): Promise<string> {
    const { cached } = this;
    if (cached !== undefined && this.context.clock.now() < cached.refreshAt) return cached.token;
    // One request in flight at a time: concurrent callers all wait for it. It ends by the deadline of the
    // call that started it, which (one client, one deadlineMs) is before the deadline of any that joined.
    this.inFlight ??= this.fetchToken(deadlineAt).finally(() => {
      this.inFlight = undefined;
    });
    return (await this.inFlight).token;
  }

  replace(token: string): boolean {
    if (this.cached?.token === token) this.cached = undefined;
    return true;
  }

  private async fetchToken(deadlineAt: number): Promise<CachedToken> {
    const { credentials, context, recent } = this;
    const { tokenUrl } = credentials;
    const what = endpointName(tokenUrl);
    const init = tokenRequestInit(credentials, this.basicCredential);
    const attempt = async (signal: AbortSignal): Promise<CachedToken> => {
      const requestedAt = context.clock.now();
      const answer = await exchange(context.fetch, tokenUrl, { ...init, signal }, what);
      if (answer instanceof PlantStoreError) throw new RetryableFailure(answer);
      return tokenOf(answer, requestedAt, tokenUrl, recent.forms, context.clock);
    };
    try {
      const fetched = await requestWithRetries({ ...context, what, deadlineAt }, attempt);
      recent.add(fetched.token);
      this.cached = fetched;
      return fetched;
    } catch (error) {
      throw asTokenEndpointError(error, tokenUrl);
    }
  }
}

/** The token endpoint as messages name it. */
function endpointName(tokenUrl: string): string {
  return `token endpoint ${tokenUrl}`;
}

/** The client-credentials grant's request (RFC 6749 §4.4), without its signal. */
function tokenRequestInit({ scope }: ClientCredentials, basicCredential: string) {
  const form = new URLSearchParams({ grant_type: "client_credentials" });
  if (scope !== undefined) form.set("scope", scope);
  return {
    method: "POST",
    headers: {
      authorization: `Basic ${basicCredential}`,
      "content-type": "application/x-www-form-urlencoded",
      accept: "application/json",
    },
    body: form.toString(),
  };
}

/**
 * What the token endpoint's answer means: a token to cache, or a thrown failure (a RetryableFailure when
 * worth another attempt).
 */
function tokenOf(
  answer: Exchange,
  requestedAt: number,
  tokenUrl: string,
  knownSecrets: readonly string[],
  clock: Clock,
): CachedToken {
  const what = endpointName(tokenUrl);
  const fields = jsonFields(answer.body);
  // A token given with a refusal (a 200 of another token type) is one to hide as well.
  const granted = fields.access_token;
  const secrets =
    typeof granted === "string" && granted !== ""
      ? [...credentialForms(granted), ...knownSecrets]
      : knownSecrets;
  const waitMs = retryAfterMs(answer.headers, clock);
  const details = {
    status: answer.status,
    requestId: maskedRequestId(answer.headers, secrets),
    retryAfterSeconds: secondsOf(waitMs),
  };
  if (answer.status === 200) return grantedToken(fields, requestedAt, tokenUrl, secrets, details);
  const oauthError = typeof fields.error === "string" ? maskedExcerpt(fields.error, secrets, 100) : undefined;
  const description =
    typeof fields.error_description === "string"
      ? `: ${maskedExcerpt(fields.error_description, secrets)}`
      : "";
  const message = masked(
    `${what} answered ${answer.status} ${oauthError ?? "without an OAuth error"}${description}`,
    secrets,
  );
  const failure = new TokenEndpointError(message, tokenUrl, oauthError, details);
  if (!RETRYABLE_STATUSES.has(answer.status)) throw failure;
  throw new RetryableFailure(failure, waitMs);
}

/** The Bearer token a 200 grants, cached until shortly before it expires; a 200 without one is thrown. */
function grantedToken(
  fields: Record<string, unknown>,
  requestedAt: number,
  tokenUrl: string,
  secrets: readonly string[],
  details: PlantStoreErrorDetails,
): CachedToken {
  const what = endpointName(tokenUrl);
  const token = fields.access_token;
  const tokenType = fields.token_type;
  if (typeof token !== "string" || token === "" || /[\s,]/.test(token)) {
    throw new TokenEndpointError(
      `${what} answered 200 without an access token`,
      tokenUrl,
      undefined,
      details,
    );
  }
  if (typeof tokenType === "string" && tokenType.toLowerCase() !== "bearer") {
    // The token type is the server's word: masked like any other (the token it came with among the secrets).
    throw new TokenEndpointError(
      `${what} gave a ${maskedExcerpt(tokenType, secrets, 40)} token, not a Bearer one`,
      tokenUrl,
      undefined,
      details,
    );
  }
  return { token, refreshAt: requestedAt + usableMs(fields.expires_in) };
}

/** A timeout or no answer is the token endpoint's too: say so in the class, for `instanceof`. */
function asTokenEndpointError(error: unknown, tokenUrl: string): unknown {
  if (error instanceof PlantStoreError && !(error instanceof TokenEndpointError)) {
    return new TokenEndpointError(error.message, tokenUrl, undefined, {
      status: error.status,
      requestId: error.requestId,
      attempts: error.attempts,
      cause: error.cause,
    });
  }
  return error;
}

/** How long a token with this `expires_in` is used: up to the margin before it expires; 0 when unknown. */
function usableMs(expiresIn: unknown): number {
  const lifetimeMs = typeof expiresIn === "number" && expiresIn > 0 ? expiresIn * 1000 : 0;
  return lifetimeMs - Math.min(TOKEN_EXPIRY_MARGIN_MS, lifetimeMs / 10);
}
