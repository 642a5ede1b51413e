import type { Clock } from "../clock.ts";
import {
  type DependencyUnavailableError,
  IssuerUnavailableError,
  UnknownSigningKeyError,
  UnknownSigningKeyHeldError,
} from "../errors.ts";
import { logWarning } from "../log.ts";
import { loadNodeCrypto } from "../node-crypto.ts";
import { KeySetInvalidError, parseKeySet, UNKNOWN_SIGNING_KEY } from "./json-web-keys.ts";
import { KeySetFetchError, type KeySetFetcher } from "./jwks-fetcher.ts";
import type { JwsAlgorithm } from "./key-algorithms.ts";
import { KeySet, type LeftOutKey, type SigningKey } from "./key-set.ts";

export interface IssuerKeyCacheOptions {
  /** The issuer's key-set URL: configuration, the one thing the cache is for. */
  jwksUrl: string;
  fetcher: KeySetFetcher;
  /** After a fetch that did not yield the key a token names, no fetch for this long. */
  refetchIntervalSeconds: number;
  /** Tests move it past the refetch interval instead of waiting. */
  clock: Clock;
}

const KEY_SET_NOT_FETCHED = "the token issuer's signing keys could not be fetched";
const KEY_SET_NOT_USABLE = "the token issuer's key set was fetched but is not a key set this API can take";
const KEY_NOT_YET_KNOWN =
  "the token names a key not among the issuer's keys as last fetched; they are fetched again after Retry-After";

/** Keeps a log line short whatever the issuer named its key; a kid is no secret. */
const MAX_LOGGED_KID_LENGTH = 100;

/**
 * The issuer's key set, fetched and cached so that the issuer's faults are not blamed on the caller:
 * - a key in the cached set is used without a fetch, whatever the issuer is doing;
 * - a key not in it triggers one fetch, shared by every request needing it meanwhile;
 * - a fetch that does not yield the requested key opens a window of `refetchIntervalSeconds` in which
 *   nothing is fetched: the issuer failing (5xx, timeout, a body that is not a key set) answers 503,
 *   a fresh key set lacking the key answers 401, and inside the window a token naming an unknown key
 *   answers 503 with the seconds left, since only a fresh key set could tell a rotated key from a
 *   bogus one. So a caller sending random kids gets one fetch per window. The 401 and the window's 503s
 *   count under UnknownSigningKey; the issuer's own faults, and their window's 503s, under
 *   IssuerUnavailable.
 * A fetch nobody waits for (the init-time prefetch) opens no window when it fails.
 * Each key is taken or left out (key-set.ts) and imported into node:crypto when its key set arrives (at
 * init, with the prefetch), once: the imported keys live and are replaced with their key set. A kid the
 * set publishes, even only under keys left out, is known: a token naming it fetches nothing. Nothing is kept per token, per kid a
 * token names or per issuer it claims: what the cache holds is bounded by the issuer's key set.
 */
export class IssuerKeyCache {
  readonly #options: IssuerKeyCacheOptions;
  /** The last key set fetched whole; a failed fetch leaves it as it was. */
  #keySet: KeySet | undefined;
  /** The fetch under way, which every caller needing the key set meanwhile shares. */
  #fetching: Promise<KeySet> | undefined;
  /** Until then (clock milliseconds), a token naming a key not in the key set is answered 503, unfetched. */
  #refetchAllowedAt = 0;
  /** Why refetching is held: the 503 to answer meanwhile. */
  #heldBecause: (retryAfterSeconds: number) => DependencyUnavailableError =
    issuerUnavailable(KEY_SET_NOT_FETCHED);

  constructor(options: IssuerKeyCacheOptions) {
    this.#options = options;
  }

  /**
   * The key `kid` names for a token of `algorithm`: from the cached key set, or from a fetch if allowed;
   * else 401 (KeySet.keyFor, or a fresh key set lacking the kid) or 503.
   */
  async signingKey(kid: string, algorithm: JwsAlgorithm): Promise<SigningKey> {
    if (this.#keySet?.has(kid)) return this.#keySet.keyFor(kid, algorithm);
    const heldForSeconds = this.#secondsUntilRefetch();
    if (heldForSeconds > 0) throw withoutStack(this.#heldBecause(heldForSeconds));

    let keySet: KeySet;
    try {
      keySet = await this.fetchKeySet();
    } catch (error) {
      if (!(error instanceof KeySetFetchError || error instanceof KeySetInvalidError)) throw error;
      const message = error instanceof KeySetFetchError ? KEY_SET_NOT_FETCHED : KEY_SET_NOT_USABLE;
      this.#holdRefetches(issuerUnavailable(message));
      throw withoutStack(new IssuerUnavailableError(message, this.#secondsUntilRefetch(), { cause: error }));
    }
    if (keySet.has(kid)) return keySet.keyFor(kid, algorithm);
    this.#holdRefetches((seconds) => new UnknownSigningKeyHeldError(KEY_NOT_YET_KNOWN, seconds));
    throw new UnknownSigningKeyError(UNKNOWN_SIGNING_KEY);
  }

  /**
   * Fetches the key set (or joins the fetch under way), imports its keys, logs each key left out, and
   * caches it: the prefetch.
   */
  fetchKeySet(): Promise<KeySet> {
    this.#fetching ??= Promise.all([this.#options.fetcher.fetch(this.#options.jwksUrl), loadNodeCrypto()])
      .then(([body, nodeCrypto]) => {
        const keySet = new KeySet(parseKeySet(body), nodeCrypto);
        for (const key of keySet.leftOut) reportLeftOutKey(key);
        return keySet;
      })
      .then(
        (keySet) => {
          this.#keySet = keySet;
          this.#fetching = undefined;
          return keySet;
        },
        (error: unknown) => {
          this.#fetching = undefined;
          throw error;
        },
      );
    return this.#fetching;
  }

  /** Opens the window once per fetch: the requests that shared the fetch do not extend it. */
  #holdRefetches(because: (retryAfterSeconds: number) => DependencyUnavailableError): void {
    const now = this.#options.clock.now();
    if (now < this.#refetchAllowedAt) return;
    this.#refetchAllowedAt = now + this.#options.refetchIntervalSeconds * 1000;
    this.#heldBecause = because;
  }

  /** Rounded up, so a window still open is never said to end in 0 s; 0 once it has closed. */
  #secondsUntilRefetch(): number {
    return Math.ceil(Math.max(0, this.#refetchAllowedAt - this.#options.clock.now()) / 1000);
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

/**
 * One line per key left out, per fetch, on stderr (stdout is one JSON line per request): its kid and why,
 * never its key material.
 */
function reportLeftOutKey({ kid, reason }: LeftOutKey): void {
  const shownKid =
    kid === undefined || kid.length <= MAX_LOGGED_KID_LENGTH
      ? kid
      : `${kid.slice(0, MAX_LOGGED_KID_LENGTH)}...`;
  logWarning("a key of the issuer's key set is left out", { kid: shownKid ?? null, reason });
}
