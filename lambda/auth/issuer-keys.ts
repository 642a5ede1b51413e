import { timed } from "../call-timings.ts";
import { type Clock, systemClock } from "../clock.ts";
import { ApiError } from "../errors.ts";
import { logFailure } from "../log.ts";
import { nodeCrypto } from "../node-crypto.ts";
import { invalidToken, type JwsAlgorithm, UNKNOWN_SIGNING_KEY } from "./jws.ts";
import { isKeySetError, type KeySet, parseKeySet, type SigningKey } from "./key-set.ts";
import {
  createJwksFetcher,
  JWKS_RESPONSE_TIMEOUT_MS,
  type KeySetFetcher,
  type KeySetFetchObserver,
} from "./key-set-download.ts";

/**
 * After a key-set fetch that did not yield the key a token names (the key is not there, or the issuer
 * failed), the key set is not fetched again for this long; nor after a refresh that failed.
 */
export const KEY_SET_REFETCH_INTERVAL_SECONDS = 10;
/**
 * How old the key set may grow before it is fetched again in the background, after an answer: a key the
 * issuer stopped publishing stops being trusted at the first refresh that shows it gone. jose refetches
 * after 10 minutes; half that, so that a refresh that fails once still lands within 10.
 */
export const KEY_SET_REFRESH_INTERVAL_SECONDS = 300;

const KEY_SET_NOT_FETCHED = "the token issuer's signing keys could not be fetched";
const KEY_SET_NOT_USABLE = "the token issuer's key set was fetched but is not a key set this API can take";
const KEY_NOT_YET_KNOWN =
  "the token names a key not among the issuer's keys as last fetched; they are fetched again after Retry-After";

/**
 * The window after a fetch that did not yield the key a token named: until it closes (after
 * KEY_SET_REFETCH_INTERVAL_SECONDS) nothing is fetched for a key not in the key set, and such a token is
 * answered the window's 503, with the seconds left. So a caller sending random kids gets one fetch per
 * window, whatever its rate.
 */
function createRefetchWindow(clock: Clock) {
  let closesAt = 0;
  let answerWhileOpen: ((retryAfterSeconds: number) => ApiError) | undefined;
  /** Rounded up, so a window still open is never said to end in 0 s; 0 once it has closed. */
  const secondsLeft = () => Math.ceil(Math.max(0, closesAt - clock.now()) / 1000);
  return {
    secondsLeft,
    /** Opens the window, once per fetch: the requests that shared the fetch do not extend it. */
    open(answer: (retryAfterSeconds: number) => ApiError): void {
      const now = clock.now();
      if (now < closesAt) return;
      closesAt = now + KEY_SET_REFETCH_INTERVAL_SECONDS * 1000;
      answerWhileOpen = answer;
    },
    /** The 503 to answer while the window is open; undefined once it has closed. */
    heldAnswer(): ApiError | undefined {
      const seconds = secondsLeft();
      return seconds > 0 && answerWhileOpen ? withoutStack(answerWhileOpen(seconds)) : undefined;
    },
  };
}

export interface IssuerKeysOptions {
  /** How the key set is downloaded; createJwksFetcher's when not given (tests count fetches with theirs). */
  fetcher?: KeySetFetcher | undefined;
  /** Told of each download the default fetcher makes (tracing). */
  observeFetch?: KeySetFetchObserver | undefined;
  /** The system's when not given; tests move it past the windows instead of waiting. */
  clock?: Clock | undefined;
  /**
   * The key set delivered with the deployment (JWKS_JSON): trusted at once, so that a cold start waits
   * for no issuer, and confirmed with the issuer by the first refresh.
   */
  deliveredKeySet?: string | undefined;
  /**
   * Without a delivered key set, start fetching the issuer's now, so that the first request finds it
   * fetched or under way. A failed prefetch writes one line to stderr: the first request fetches again.
   */
  prefetchKeys?: boolean | undefined;
}

/** The issuer's keys as createIssuerKeys keeps them. */
export interface IssuerKeys {
  /**
   * The key `kid` names for a token of `algorithm`: from the key set held, or from a fetch if the window
   * allows one; else 401 (KeySet.keyFor, or a fresh key set lacking the kid) or 503.
   */
  signingKey(kid: string, algorithm: JwsAlgorithm): Promise<SigningKey>;
  /** After an answer: a refresh when one is due and none under way, started later; a failure is one line. */
  refreshInBackground(): void;
}

/**
 * The issuer's keys, kept so that the issuer is never on a request's path when it need not be, and its
 * faults are never blamed on the caller. The key set delivered at deploy time, if any, serves from the first
 * request; a key in the set held is used without a fetch, whatever the issuer is doing. refreshInBackground(),
 * called after each answer and never awaited, fetches the set again when due: at once for a delivered set (to
 * confirm it), then KEY_SET_REFRESH_INTERVAL_SECONDS after the last fetch, or KEY_SET_REFETCH_INTERVAL_SECONDS
 * after a failed one; each fetch replaces the set, so a key the issuer dropped stops being trusted with it.
 * A key not in the set triggers one fetch, shared by every request needing it meanwhile; one that does not
 * yield the key, like a refresh the issuer fails, opens the refetch window: the issuer failing answers 503,
 * a fresh set lacking the key 401 (UnknownSigningKey), and inside the window such a token 503
 * (UnknownSigningKeyHeld, or IssuerUnavailable after the issuer's own fault). Nothing is kept per token,
 * per kid or per claimed issuer.
 */
export function createIssuerKeys(
  { jwksUrl }: { jwksUrl: string },
  options: IssuerKeysOptions = {},
): IssuerKeys {
  const clock = options.clock ?? systemClock;
  const fetcher = options.fetcher ?? createJwksFetcher(JWKS_RESPONSE_TIMEOUT_MS, clock, options.observeFetch);
  const refetchWindow = createRefetchWindow(clock);
  /** The last key set taken whole; a failed fetch leaves it as it was. */
  let keySet: KeySet | undefined;
  /** The fetch under way, which every caller needing the key set meanwhile shares. */
  let fetching: Promise<KeySet> | undefined;
  /** Clock time from which refreshInBackground() fetches. */
  let refreshDueAt = Number.POSITIVE_INFINITY;

  /**
   * Fetches the key set (or joins the fetch under way), imports its keys, logs each key left out, and
   * holds it until the next: the init-time prefetch, a refresh, or a request's fetch for an unknown kid.
   */
  const fetchKeySet = (): Promise<KeySet> =>
    (fetching ??= fetcher
      .fetch(jwksUrl)
      .then((body) => parseKeySet(body, nodeCrypto()))
      .then(
        (fetched) => {
          fetching = undefined;
          keySet = fetched;
          refreshDueAt = clock.now() + KEY_SET_REFRESH_INTERVAL_SECONDS * 1000;
          return fetched;
        },
        (error: unknown) => {
          fetching = undefined;
          refreshDueAt = clock.now() + KEY_SET_REFETCH_INTERVAL_SECONDS * 1000;
          throw error;
        },
      ));

  /**
   * After a fetch the issuer failed, a request's or a refresh's: the window opens, so that a token naming
   * a key not held asks the issuer at most once per window. Its 503; undefined for any other error.
   */
  const issuerFailed = (error: unknown): ApiError | undefined => {
    if (!isKeySetError(error)) return undefined;
    const message = error.name === "KeySetFetchError" ? KEY_SET_NOT_FETCHED : KEY_SET_NOT_USABLE;
    refetchWindow.open(
      (seconds) => new ApiError("IssuerUnavailable", message, { retryAfterSeconds: seconds }),
    );
    return withoutStack(
      new ApiError("IssuerUnavailable", message, {
        retryAfterSeconds: refetchWindow.secondsLeft(),
        cause: error,
      }),
    );
  };

  const delivered = options.deliveredKeySet;
  if (delivered) {
    refreshDueAt = clock.now();
    // At init, synchronously: the first request finds the keys imported.
    try {
      keySet = parseKeySet(delivered, nodeCrypto());
    } catch (error) {
      logFailure("the key set delivered with the deployment is not usable; the issuer's is fetched", error);
    }
  } else if (options.prefetchKeys) {
    // One line, on stderr (stdout is one JSON line per request); the error names the URL, no secret.
    fetchKeySet().catch((error) =>
      logFailure("prefetching the issuer's key set failed; requests fetch it", error),
    );
  }

  return {
    async signingKey(kid, algorithm) {
      if (keySet?.has(kid)) return keySet.keyFor(kid, algorithm);
      const held = refetchWindow.heldAnswer();
      if (held) throw held;

      let fetched: KeySet;
      try {
        fetched = await timed("issuerMs", fetchKeySet);
      } catch (error) {
        throw issuerFailed(error) ?? error;
      }
      if (fetched.has(kid)) return fetched.keyFor(kid, algorithm);
      refetchWindow.open(
        (seconds) => new ApiError("UnknownSigningKeyHeld", KEY_NOT_YET_KNOWN, { retryAfterSeconds: seconds }),
      );
      throw invalidToken(UNKNOWN_SIGNING_KEY, "UnknownSigningKey");
    },

    refreshInBackground() {
      if (fetching || clock.now() < refreshDueAt) return;
      setImmediate(() =>
        fetchKeySet().catch((error: unknown) => {
          issuerFailed(error);
          logFailure("refreshing the issuer's key set failed; the keys last confirmed keep serving", error);
        }),
      );
    },
  };
}

/**
 * The issuer's fault, expected and logged once per 503 (a random kid inside the window is one): its
 * message and cause say everything, and a stack of our frames would make each log line ten.
 */
function withoutStack<E extends Error>(error: E): E {
  error.stack = `${error.name}: ${error.message}`;
  return error;
}
