import { InvalidTokenError, IssuerUnavailableError } from "../errors.ts";
import { loadNodeCrypto } from "../node-crypto.ts";
import { type JsonWebKey, KeySetInvalidError, parseKeySet, UNKNOWN_SIGNING_KEY } from "./json-web-keys.ts";
import { KeySetFetchError, type KeySetFetcher } from "./jwks-fetcher.ts";
import { importVerificationKey, type VerificationKey } from "./signatures.ts";

export interface IssuerKeyCacheOptions {
  /** The issuer's key-set URL: configuration, the one thing the cache is for. */
  jwksUrl: string;
  fetcher: KeySetFetcher;
  /** After a fetch that did not yield the key a token names, no fetch for this long. */
  refetchIntervalSeconds: number;
  /** Milliseconds since the epoch; tests move it past the refetch interval instead of waiting. */
  clock: () => number;
}

/** A key of the issuer's key set, imported when the key set arrived. */
export interface SigningKey {
  jwk: JsonWebKey;
  verification: VerificationKey;
}

const KEY_SET_UNAVAILABLE = "the token issuer's signing keys could not be fetched";

/**
 * The issuer's key set, fetched and cached so that the issuer's faults are not blamed on the caller:
 * - a key in the cached set is used without a fetch, whatever the issuer is doing;
 * - a key not in it triggers one fetch, shared by every request needing it meanwhile;
 * - a fetch that does not yield the requested key opens a window of `refetchIntervalSeconds` in which
 *   nothing is fetched: the issuer failing (5xx, timeout, a body that is not a key set) answers 503,
 *   a fresh key set lacking the key answers 401, and inside the window a token naming an unknown key
 *   answers 503 with the seconds left, since only a fresh key set could tell a rotated key from a
 *   bogus one. So a caller sending random kids gets one fetch per window.
 * A fetch nobody waits for (the init-time prefetch) opens no window when it fails.
 * Each key is imported into node:crypto when its key set arrives (at init, with the prefetch), once:
 * the imported keys live and are replaced with their key set. Nothing is kept per token, per kid a
 * token names or per issuer it claims: what the cache holds is bounded by the issuer's key set.
 */
export class IssuerKeyCache {
  readonly #options: IssuerKeyCacheOptions;
  /** The last key set fetched whole, by kid; a failed fetch leaves it as it was. */
  #keySet: Map<string, SigningKey> | undefined;
  /** The fetch under way, which every caller needing the key set meanwhile shares. */
  #fetching: Promise<Map<string, SigningKey>> | undefined;
  /** Until then (clock milliseconds), a token naming a key not in the key set is answered 503, unfetched. */
  #refetchAllowedAt = 0;
  /** Why refetching is held: the 503's message. */
  #heldBecause = KEY_SET_UNAVAILABLE;

  constructor(options: IssuerKeyCacheOptions) {
    this.#options = options;
  }

  /** The key `kid` names: from the cached key set, or from a fetch if allowed; else 401 or 503. */
  async signingKey(kid: string): Promise<SigningKey> {
    const cached = this.#keySet?.get(kid);
    if (cached) return cached;
    if (this.#options.clock() < this.#refetchAllowedAt) {
      throw withoutStack(new IssuerUnavailableError(this.#heldBecause, this.#secondsUntilRefetch()));
    }

    let keySet: Map<string, SigningKey>;
    try {
      keySet = await this.fetchKeySet();
    } catch (error) {
      if (!(error instanceof KeySetFetchError || error instanceof KeySetInvalidError)) throw error;
      this.#holdRefetches(KEY_SET_UNAVAILABLE);
      throw withoutStack(
        new IssuerUnavailableError(KEY_SET_UNAVAILABLE, this.#secondsUntilRefetch(), { cause: error }),
      );
    }
    const fetched = keySet.get(kid);
    if (fetched) return fetched;
    this.#holdRefetches(
      "the token names a key not among the issuer's keys as last fetched; they are fetched again after Retry-After",
    );
    throw new InvalidTokenError(UNKNOWN_SIGNING_KEY);
  }

  /** Fetches the key set (or joins the fetch under way), imports its keys and caches it: the prefetch. */
  fetchKeySet(): Promise<Map<string, SigningKey>> {
    this.#fetching ??= Promise.all([this.#options.fetcher.fetch(this.#options.jwksUrl), loadNodeCrypto()])
      .then(([body, nodeCrypto]) => {
        const keySet = new Map<string, SigningKey>();
        for (const jwk of parseKeySet(body)) {
          // The first of a kid is the key (as aws-jwt-verify's lookup did); a key without one is never named.
          if (jwk.kid === undefined || keySet.has(jwk.kid)) continue;
          keySet.set(jwk.kid, { jwk, verification: importVerificationKey(nodeCrypto, jwk) });
        }
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
  #holdRefetches(because: string): void {
    const now = this.#options.clock();
    if (now < this.#refetchAllowedAt) return;
    this.#refetchAllowedAt = now + this.#options.refetchIntervalSeconds * 1000;
    this.#heldBecause = because;
  }

  #secondsUntilRefetch(): number {
    return Math.max(1, Math.ceil((this.#refetchAllowedAt - this.#options.clock()) / 1000));
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
