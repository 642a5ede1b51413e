import {
  FetchError,
  JwksNotAvailableInCacheError,
  JwksValidationError,
  JwkValidationError,
  JwtWithoutValidKidError,
  KidNotFoundInJwksError,
} from "aws-jwt-verify/error";
import type { Fetcher } from "aws-jwt-verify/https";
import { assertIsJwks, findJwkInJwks, type Jwks, type JwksCache, type JwkWithKid } from "aws-jwt-verify/jwk";
import { safeJsonParse } from "aws-jwt-verify/safe-json-parse";
import { IssuerUnavailableError } from "../errors.ts";
import { assertAlgorithmFitsKey } from "./key-algorithms.ts";

type DecomposedJwt = Parameters<JwksCache["getJwk"]>[1];

export interface IssuerKeyCacheOptions {
  fetcher: Fetcher;
  /** After a fetch that did not yield the key a token names, no fetch for this long. */
  refetchIntervalSeconds: number;
  /** Milliseconds since the epoch; tests move it past the refetch interval instead of waiting. */
  clock: () => number;
}

interface IssuerKeys {
  /** The last key set fetched whole; a failed fetch leaves it as it was. */
  keySet: Jwks | undefined;
  /** The fetch under way, which every caller needing the key set meanwhile shares. */
  fetching: Promise<Jwks> | undefined;
  /** Until then (clock milliseconds), a token naming a key not in keySet is answered 503, unfetched. */
  refetchAllowedAt: number;
  /** Why refetching is held: the 503's message. */
  heldBecause: string;
}

const KEY_SET_UNAVAILABLE = "the token issuer's signing keys could not be fetched";

/**
 * aws-jwt-verify's key-set cache (its JwksCache), replacing SimpleJwksCache and its penalty box so
 * that the issuer's faults are not blamed on the caller:
 * - a key in the cached set is used without a fetch, whatever the issuer is doing;
 * - a key not in it triggers one fetch, shared by every request needing it meanwhile;
 * - a fetch that does not yield the requested key opens a window of `refetchIntervalSeconds` in which
 *   nothing is fetched: the issuer failing (5xx, timeout, a body that is not a key set) answers 503,
 *   a fresh key set lacking the key answers 401 (KidNotFoundInJwksError), and inside the window a
 *   token naming an unknown key answers 503 with the seconds left, since only a fresh key set could
 *   tell a rotated key from a bogus one. So a caller sending random kids gets one fetch per window.
 * A fetch nobody waits for (the init-time prefetch) opens no window when it fails.
 * Nothing is kept per kid or per token: one entry per key-set URL, which is configuration.
 * A key is handed out only for a token whose `alg` fits its type and curve (key-algorithms.ts).
 */
export class IssuerKeyCache implements JwksCache {
  readonly #issuers = new Map<string, IssuerKeys>();
  readonly #options: IssuerKeyCacheOptions;

  constructor(options: IssuerKeyCacheOptions) {
    this.#options = options;
  }

  async getJwk(jwksUri: string, decomposedJwt: DecomposedJwt): Promise<JwkWithKid> {
    const jwk = await this.#namedKey(jwksUri, decomposedJwt);
    assertAlgorithmFitsKey(decomposedJwt.header.alg, jwk);
    return jwk;
  }

  async #namedKey(jwksUri: string, decomposedJwt: DecomposedJwt): Promise<JwkWithKid> {
    const kid = kidOf(decomposedJwt);
    const keys = this.#keysOf(jwksUri);
    const cached = keys.keySet && findJwkInJwks(keys.keySet, kid);
    if (cached) return cached;
    if (this.#options.clock() < keys.refetchAllowedAt) {
      throw withoutStack(new IssuerUnavailableError(keys.heldBecause, this.#secondsUntilRefetch(keys)));
    }

    let keySet: Jwks;
    try {
      keySet = await this.getJwks(jwksUri);
    } catch (error) {
      if (!isIssuerFault(error)) throw error;
      this.#holdRefetches(keys, KEY_SET_UNAVAILABLE);
      throw withoutStack(
        new IssuerUnavailableError(KEY_SET_UNAVAILABLE, this.#secondsUntilRefetch(keys), { cause: error }),
      );
    }
    const jwk = findJwkInJwks(keySet, kid);
    if (jwk) return jwk;
    this.#holdRefetches(
      keys,
      "the token names a key not among the issuer's keys as last fetched; they are fetched again after Retry-After",
    );
    throw new KidNotFoundInJwksError("the token names a key not in the issuer's key set");
  }

  /** Fetches the key set (or joins the fetch under way) and caches it; what `hydrate()` calls. */
  getJwks(jwksUri: string): Promise<Jwks> {
    const keys = this.#keysOf(jwksUri);
    keys.fetching ??= this.#options.fetcher
      .fetch(jwksUri)
      .then(parseKeySet)
      .then(
        (keySet) => {
          keys.keySet = keySet;
          keys.fetching = undefined;
          return keySet;
        },
        (error: unknown) => {
          keys.fetching = undefined;
          throw error;
        },
      );
    return keys.fetching;
  }

  getCachedJwk(jwksUri: string, decomposedJwt: DecomposedJwt): JwkWithKid {
    const kid = kidOf(decomposedJwt);
    const keySet = this.#issuers.get(jwksUri)?.keySet;
    if (keySet === undefined)
      throw new JwksNotAvailableInCacheError("the issuer's key set is not cached yet");
    const jwk = findJwkInJwks(keySet, kid);
    if (jwk === undefined)
      throw new KidNotFoundInJwksError("the token names a key not in the issuer's key set");
    return jwk;
  }

  addJwks(jwksUri: string, jwks: Jwks): void {
    this.#keysOf(jwksUri).keySet = jwks;
  }

  #keysOf(jwksUri: string): IssuerKeys {
    let keys = this.#issuers.get(jwksUri);
    if (keys === undefined) {
      keys = {
        keySet: undefined,
        fetching: undefined,
        refetchAllowedAt: 0,
        heldBecause: KEY_SET_UNAVAILABLE,
      };
      this.#issuers.set(jwksUri, keys);
    }
    return keys;
  }

  /** Opens the window once per fetch: the requests that shared the fetch do not extend it. */
  #holdRefetches(keys: IssuerKeys, because: string): void {
    const now = this.#options.clock();
    if (now < keys.refetchAllowedAt) return;
    keys.refetchAllowedAt = now + this.#options.refetchIntervalSeconds * 1000;
    keys.heldBecause = because;
  }

  #secondsUntilRefetch(keys: IssuerKeys): number {
    return Math.max(1, Math.ceil((keys.refetchAllowedAt - this.#options.clock()) / 1000));
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

function kidOf(decomposedJwt: DecomposedJwt): string {
  const { kid } = decomposedJwt.header;
  if (typeof kid !== "string") throw new JwtWithoutValidKidError("the token names no key (kid)");
  return kid;
}

/** The fetch failed, or the issuer answered 200 with something that is not a key set (HTML, `{}`, cut short). */
function isIssuerFault(error: unknown): boolean {
  return (
    error instanceof FetchError || error instanceof JwksValidationError || error instanceof JwkValidationError
  );
}

function parseKeySet(body: ArrayBuffer): Jwks {
  let parsed: ReturnType<typeof safeJsonParse>;
  try {
    parsed = safeJsonParse(new TextDecoder("utf-8", { fatal: true }).decode(body));
  } catch (error) {
    throw new JwksValidationError(
      `the key set is not JSON: ${error instanceof Error ? error.message : error}`,
    );
  }
  assertIsJwks(parsed);
  return parsed;
}
