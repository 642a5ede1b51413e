import { type Clock, timeoutSignal } from "../clock.ts";
import {
  type DependencyUnavailableError,
  IssuerUnavailableError,
  UnknownSigningKeyError,
  UnknownSigningKeyHeldError,
} from "../errors.ts";
import { logWarning } from "../log.ts";
import { loadNodeCrypto } from "../node-crypto.ts";
import { sendRequest } from "../transport/http-request.ts";
import type { JwsAlgorithm } from "./jws.ts";
import {
  KeySet,
  KeySetInvalidError,
  reportLeftOutKeys,
  type SigningKey,
  UNKNOWN_SIGNING_KEY,
} from "./key-set.ts";

/** Time the issuer has to answer one key-set request. */
export const JWKS_RESPONSE_TIMEOUT_MS = 1000;
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

/** How the key set is downloaded: the body of a 200, or a KeySetFetchError. */
export interface KeySetFetcher {
  fetch(uri: string): Promise<Uint8Array>;
}

/** The key set could not be downloaded: no answer, or not a 200. The issuer's fault, never the caller's. */
export class KeySetFetchError extends Error {
  override name = "KeySetFetchError";
  constructor(
    uri: string,
    detail: string,
    /** False for an answer other than 200: asking again at once would get the same. */
    readonly retryable: boolean,
  ) {
    super(`fetching ${uri} failed: ${detail}`);
  }
}

/** How one download ended, for an observer: the answer's status, or why none came; never the body. */
export interface KeySetFetchOutcome {
  status?: number;
  failure?: unknown;
}

/** Called as a download starts; what it returns, if anything, is called once as it ends (lambda/tracing/). */
export type KeySetFetchObserver = (url: string) => ((outcome: KeySetFetchOutcome) => void) | undefined;

/**
 * The key-set download, on node:http like the store's calls (lambda/transport/http-request.ts). As
 * aws-jwt-verify's fetcher did: once more at once after a network fault, never after an answer. Each
 * request has `timeoutMs` on `clock` to answer; tests move a fake clock instead of waiting.
 */
export function createJwksFetcher(
  timeoutMs: number,
  clock: Clock,
  observeFetch?: KeySetFetchObserver,
): KeySetFetcher {
  const fetchOnce = async (uri: string): Promise<Uint8Array> => {
    const ended = observeFetch?.(uri);
    const timeout = timeoutSignal(clock, timeoutMs);
    let answer: Awaited<ReturnType<typeof sendRequest>>;
    try {
      answer = await sendRequest({
        method: "GET",
        url: new URL(uri),
        headers: { accept: "application/json" },
        signal: timeout.signal,
      });
    } catch (error) {
      ended?.({ failure: error });
      throw new KeySetFetchError(uri, error instanceof Error ? error.message : String(error), true);
    } finally {
      timeout.cancel();
    }
    ended?.({ status: answer.status });
    if (answer.status !== 200) {
      throw new KeySetFetchError(uri, `status code is ${answer.status}, expected 200`, false);
    }
    return answer.body;
  };
  return {
    async fetch(uri) {
      try {
        return await fetchOnce(uri);
      } catch (error) {
        if (!(error instanceof KeySetFetchError && error.retryable)) throw error;
        return fetchOnce(uri);
      }
    },
  };
}

const KEY_SET_NOT_FETCHED = "the token issuer's signing keys could not be fetched";
const KEY_SET_NOT_USABLE = "the token issuer's key set was fetched but is not a key set this API can take";
const KEY_NOT_YET_KNOWN =
  "the token names a key not among the issuer's keys as last fetched; they are fetched again after Retry-After";

/**
 * The window after a fetch that did not yield the key a token named: until it closes nothing is fetched
 * for a key not in the key set, and such a token is answered the window's 503, with the seconds left.
 * So a caller sending random kids gets one fetch per window, whatever its rate.
 */
class RefetchWindow {
  #closesAt = 0;
  #answer: (retryAfterSeconds: number) => DependencyUnavailableError = issuerUnavailable(KEY_SET_NOT_FETCHED);

  constructor(
    readonly seconds: number,
    readonly clock: Clock,
  ) {}

  /** Opens the window, once per fetch: the requests that shared the fetch do not extend it. */
  open(answer: (retryAfterSeconds: number) => DependencyUnavailableError): void {
    const now = this.clock.now();
    if (now < this.#closesAt) return;
    this.#closesAt = now + this.seconds * 1000;
    this.#answer = answer;
  }

  /** Rounded up, so a window still open is never said to end in 0 s; 0 once it has closed. */
  secondsLeft(): number {
    return Math.ceil(Math.max(0, this.#closesAt - this.clock.now()) / 1000);
  }

  /** The 503 to answer while the window is open; undefined once it has closed. */
  heldAnswer(): DependencyUnavailableError | undefined {
    const seconds = this.secondsLeft();
    return seconds > 0 ? withoutStack(this.#answer(seconds)) : undefined;
  }
}

export interface IssuerKeysOptions {
  /** The issuer's key-set URL. */
  jwksUrl: string;
  /** How the key set is downloaded; createJwksFetcher's when not given (tests count fetches with theirs). */
  fetcher?: KeySetFetcher | undefined;
  /** Told of each download the default fetcher makes (tracing). */
  observeFetch?: KeySetFetchObserver | undefined;
  /** Tests move it past the windows instead of waiting. */
  clock: Clock;
  /**
   * The key set delivered with the deployment (JWKS_JSON): trusted at once, so that a cold start waits
   * for no issuer, and confirmed with the issuer by the first refresh.
   */
  deliveredKeySet?: string | undefined;
}

/** The key set in hand (issuer-keys.ts), which the issuer's fetches replace. */
export interface HeldKeySet {
  keySet: KeySet | undefined;
  /** Clock time from which a refresh is due: at once for a delivered set not yet confirmed. */
  refreshDueAt: number;
}

/**
 * Asking the issuer for its key set, when a key is not in hand (issuer-keys.ts) or a refresh is due.
 * - A key not in the set triggers one fetch, shared by every request needing it meanwhile (and with a
 *   refresh under way); one that does not yield the key opens the RefetchWindow: the issuer failing
 *   answers 503, a fresh key set lacking the key answers 401 (UnknownSigningKey), and inside the window a
 *   token naming an unknown key answers 503 (UnknownSigningKeyHeld, or IssuerUnavailable after the
 *   issuer's own fault).
 * - refresh() fetches the set again once it is due: KEY_SET_REFRESH_INTERVAL_SECONDS after the last
 *   fetch; a failed one keeps the keys last confirmed and is due again KEY_SET_REFETCH_INTERVAL_SECONDS
 *   later. Every fetch that succeeds replaces the key set held, so a key the issuer no longer publishes
 *   stops being trusted with it.
 */
export class IssuerFetch {
  readonly #options: IssuerKeysOptions;
  readonly #held: HeldKeySet;
  readonly #fetcher: KeySetFetcher;
  readonly #window: RefetchWindow;
  /** The fetch under way, which every caller needing the key set meanwhile shares. */
  #fetching: Promise<KeySet> | undefined;

  constructor(options: IssuerKeysOptions, held: HeldKeySet) {
    this.#options = options;
    this.#held = held;
    this.#fetcher =
      options.fetcher ?? createJwksFetcher(JWKS_RESPONSE_TIMEOUT_MS, options.clock, options.observeFetch);
    this.#window = new RefetchWindow(KEY_SET_REFETCH_INTERVAL_SECONDS, options.clock);
  }

  /** The key `kid` names, which the key set held lacks: from a fetch if the window allows one; else 401 or 503. */
  async signingKey(kid: string, algorithm: JwsAlgorithm): Promise<SigningKey> {
    const held = this.#window.heldAnswer();
    if (held) throw held;

    let keySet: KeySet;
    try {
      keySet = await this.fetchKeySet();
    } catch (error) {
      if (!(error instanceof KeySetFetchError || error instanceof KeySetInvalidError)) throw error;
      const message = error instanceof KeySetFetchError ? KEY_SET_NOT_FETCHED : KEY_SET_NOT_USABLE;
      this.#window.open(issuerUnavailable(message));
      throw withoutStack(new IssuerUnavailableError(message, this.#window.secondsLeft(), { cause: error }));
    }
    if (keySet.has(kid)) return keySet.keyFor(kid, algorithm);
    this.#window.open((seconds) => new UnknownSigningKeyHeldError(KEY_NOT_YET_KNOWN, seconds));
    throw new UnknownSigningKeyError(UNKNOWN_SIGNING_KEY);
  }

  /**
   * Fetches the key set (or joins the fetch under way), imports its keys, logs each key left out, and
   * holds it until the next: the init-time prefetch, a refresh, or a request's fetch for an unknown kid.
   */
  fetchKeySet(): Promise<KeySet> {
    const { jwksUrl, clock } = this.#options;
    this.#fetching ??= Promise.all([this.#fetcher.fetch(jwksUrl), loadNodeCrypto()])
      .then(([body, nodeCrypto]) => KeySet.parse(body, nodeCrypto))
      .then(
        (parsed) => {
          this.#fetching = undefined;
          const keySet = reportLeftOutKeys(parsed);
          this.#held.keySet = keySet;
          this.#held.refreshDueAt = clock.now() + KEY_SET_REFRESH_INTERVAL_SECONDS * 1000;
          return keySet;
        },
        (error: unknown) => {
          this.#fetching = undefined;
          this.#held.refreshDueAt = clock.now() + KEY_SET_REFETCH_INTERVAL_SECONDS * 1000;
          throw error;
        },
      );
    return this.#fetching;
  }

  /** Starts a refresh when one is due and none is under way; a failure keeps the keys held, in one line. */
  refresh(): void {
    if (this.#fetching || this.#options.clock.now() < this.#held.refreshDueAt) return;
    this.fetchKeySet().catch((error: unknown) => {
      logWarning("refreshing the issuer's key set failed; the keys last confirmed keep serving", {
        detail: error instanceof Error ? error.message : String(error),
      });
    });
  }
}

/**
 * The issuer's fault, expected and logged once per 503 (a random kid inside the window is one): its
 * message and cause say everything, and a stack of our frames would make each log line ten.
 */
function withoutStack<E extends Error>(error: E): E {
  error.stack = `${error.name}: ${error.message}`;
  return error;
}

function issuerUnavailable(message: string): (retryAfterSeconds: number) => DependencyUnavailableError {
  return (seconds) => new IssuerUnavailableError(message, seconds);
}
