import { JwtVerifier } from "aws-jwt-verify";
import { SimpleFetcher } from "aws-jwt-verify/https";
import { type PenaltyBox, SimpleJwksCache } from "aws-jwt-verify/jwk";
import type { JwtPayload } from "aws-jwt-verify/jwt-model";
import type { VerifyProperties } from "aws-jwt-verify/jwt-verifier";
import { timed } from "../call-timings.ts";
import { type Clock, systemClock } from "../clock.ts";
import { ApiError } from "../errors.ts";
import { logFailure } from "../log.ts";
import { type UsableKeySet, usableKeySet } from "./key-set.ts";

/** After a fetch that did not yield the key a token named, or that the issuer failed: no fetch for so long. */
export const KEY_SET_REFETCH_INTERVAL_SECONDS = 10;
/**
 * How old the key set may grow before it is fetched again in the background, after an answer: a key the
 * issuer stopped publishing stops being trusted at the first refresh that shows it gone. Half of 10 minutes,
 * so that a refresh that fails once still lands within 10.
 */
export const KEY_SET_REFRESH_INTERVAL_SECONDS = 300;
/** Leeway for the issuer's clock and ours, either way, on `exp` and `nbf`. */
export const CLOCK_SKEW_SECONDS = 5;
/** Time the issuer has to answer one key-set request. */
export const JWKS_RESPONSE_TIMEOUT_MS = 1000;

const KEY_SET_NOT_FETCHED = "the token issuer's signing keys could not be fetched";
const KEY_SET_NOT_USABLE = "the token issuer's key set was fetched but is not a key set this API can take";
const KEY_NOT_YET_KNOWN =
  "the token names a key not among the issuer's keys as last fetched; they are fetched again after Retry-After";

export type CustomJwtCheck = NonNullable<VerifyProperties["customJwtCheck"]>;

export interface IssuerKeysOptions {
  /** The system's when not given; tests move it past the windows instead of waiting. */
  clock?: Clock | undefined;
  /** The key set delivered with the deployment (JWKS_JSON): trusted at once, confirmed by the first refresh. */
  deliveredKeySet?: string | undefined;
  /** Without a delivered key set, start fetching the issuer's now (a failure is one line on stderr). */
  prefetchKeys?: boolean | undefined;
}

/** The issuer's keys: the verifier holding them, why a kid was left out, and the refresh after answers. */
export interface IssuerKeys {
  /** aws-jwt-verify's verify with its checks, and `customJwtCheck` after them. */
  verify(token: string, customJwtCheck: CustomJwtCheck): Promise<JwtPayload>;
  leftOutReason(kid: string): string | undefined;
  /** After an answer: a refresh when one is due and none under way, started later; a failure is one line. */
  refreshInBackground(): void;
}

/**
 * The issuer's keys in aws-jwt-verify's SimpleJwksCache, so that the issuer is never on a request's path when
 * it need not be and its faults are never blamed on the caller. A key in the set held is used without a fetch;
 * a kid not in it fetches the set (one fetch, shared), unless the window is open. The window is our own
 * PenaltyBox: SimplePenaltyBox opens only when a fetched set lacks the kid, not when the issuer fails, and
 * says no Retry-After. refreshInBackground() refetches when due and hands the set to cacheJwks, which also
 * drops the key objects imported from the last (a key replaced under its kid is not kept).
 */
export function createIssuerKeys(
  policy: { issuer: string; jwksUrl: string; audiences: string[] },
  options: IssuerKeysOptions = {},
): IssuerKeys {
  const clock = options.clock ?? systemClock;
  let leftOut = new Map<string, string>();
  let refreshDueAt = Number.POSITIVE_INFINITY;
  let refreshing = false;
  let windowClosesAt = 0;
  let heldMessage = KEY_NOT_YET_KNOWN;
  /** A failed prefetch opens no window: the first request fetches again. */
  let prefetching = false;
  const secondsLeft = () => Math.ceil(Math.max(0, windowClosesAt - clock.now()) / 1000);
  /** Opens the window, once per fetch: the requests that shared the fetch do not extend it. */
  const openWindow = (message: string) => {
    if (clock.now() < windowClosesAt) return;
    windowClosesAt = clock.now() + KEY_SET_REFETCH_INTERVAL_SECONDS * 1000;
    heldMessage = message;
  };
  const windowed: PenaltyBox = {
    async wait() {
      const seconds = secondsLeft();
      const code = heldMessage === KEY_NOT_YET_KNOWN ? "UnknownSigningKeyHeld" : "IssuerUnavailable";
      if (seconds > 0) throw withoutStack(new ApiError(code, heldMessage, { retryAfterSeconds: seconds }));
    },
    registerFailedAttempt: () => openWindow(KEY_NOT_YET_KNOWN),
    registerSuccessfulAttempt: () => {},
  };
  // aws-jwt-verify's fetcher (node:https, once more at once after a network fault); node:http's agent for
  // an http:// issuer (the local run's), not imported: node:http's ES module facade loads undici, as global
  // fetch would on the first fetch.
  const agent = policy.jwksUrl.startsWith("http:")
    ? { agent: process.getBuiltinModule("node:http").globalAgent }
    : {};
  const fetcher = new SimpleFetcher({
    defaultRequestOptions: { responseTimeout: JWKS_RESPONSE_TIMEOUT_MS, ...agent },
  });
  const take = (keySet: UsableKeySet) => {
    leftOut = keySet.leftOut;
    refreshDueAt = clock.now() + KEY_SET_REFRESH_INTERVAL_SECONDS * 1000;
    return keySet.jwks;
  };
  const jwksCache = new SimpleJwksCache({
    penaltyBox: windowed,
    fetcher: {
      fetch: (uri) =>
        timed("issuerMs", () => fetcher.fetch(uri)).catch((error: unknown) => {
          // Its message names the whole URI: where the key set is, without credentials or query, is for the logs.
          const { origin, pathname } = new URL(uri);
          const detail = String(error instanceof Error ? error.message : error).replace(
            `Failed to fetch ${uri}: `,
            "",
          );
          throw issuerFailed(
            KEY_SET_NOT_FETCHED,
            new Error(`fetching ${origin}${pathname} failed: ${detail}`),
          );
        }),
    },
    jwksParser: (document) => {
      try {
        return take(usableKeySet(document));
      } catch (error) {
        throw issuerFailed(KEY_SET_NOT_USABLE, error);
      }
    },
  });
  /** The issuer's fault, a request's fetch or a refresh: the window opens, and the request's 503. */
  const issuerFailed = (message: string, cause: unknown) => {
    refreshDueAt = clock.now() + KEY_SET_REFETCH_INTERVAL_SECONDS * 1000;
    if (!prefetching) openWindow(message);
    return withoutStack(
      new ApiError("IssuerUnavailable", message, { retryAfterSeconds: secondsLeft(), cause }),
    );
  };
  const verifier = JwtVerifier.create(
    {
      issuer: policy.issuer,
      jwksUri: policy.jwksUrl,
      audience: policy.audiences.length > 0 ? policy.audiences : null,
      graceSeconds: CLOCK_SKEW_SECONDS,
    },
    { jwksCache },
  );

  if (options.deliveredKeySet) {
    try {
      verifier.cacheJwks(take(usableKeySet(options.deliveredKeySet)));
      refreshDueAt = clock.now();
    } catch (error) {
      logFailure("the key set delivered with the deployment is not usable; the issuer's is fetched", error);
    }
  } else if (options.prefetchKeys) {
    prefetching = true;
    jwksCache
      .getJwks(policy.jwksUrl)
      .catch((error) => logFailure("prefetching the issuer's key set failed; requests fetch it", error))
      .finally(() => {
        prefetching = false;
      });
  }

  return {
    verify: (token, customJwtCheck) => verifier.verify(token, { customJwtCheck }),
    leftOutReason: (kid) => leftOut.get(kid),
    refreshInBackground() {
      if (refreshing || clock.now() < refreshDueAt) return;
      refreshing = true;
      setImmediate(() =>
        jwksCache
          .getJwks(policy.jwksUrl)
          .then((jwks) => verifier.cacheJwks(jwks))
          .catch((error: unknown) =>
            logFailure("refreshing the issuer's key set failed; the keys last confirmed keep serving", error),
          )
          .finally(() => {
            refreshing = false;
          }),
      );
    },
  };
}

/** The issuer's fault, expected and logged once per 503: its message and cause say all, our frames nothing. */
function withoutStack<E extends Error>(error: E): E {
  error.stack = `${error.name}: ${error.message}`;
  return error;
}
