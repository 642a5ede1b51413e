import type { KeyObject } from "node:crypto";
import { InvalidTokenError } from "../errors.ts";
import { type JsonWebKey, publishedKid, readPublishedKey, UNKNOWN_SIGNING_KEY } from "./json-web-keys.ts";
import { algorithmNotAllowed, fitsKeyType, type JwsAlgorithm, keyType } from "./key-algorithms.ts";
import { keyWeakness } from "./key-strength.ts";
import { importVerificationKey } from "./signatures.ts";

type NodeCrypto = typeof import("node:crypto");

/** A key of the issuer's key set, imported when the key set arrived. */
export interface SigningKey {
  jwk: JsonWebKey;
  /** Its `kty` (and `crv`), read once when the key set arrived: what an alg must fit. */
  type: string;
  key: KeyObject;
}

/** A key of the key set that is never trusted, and why: said to a token naming it, and logged once. */
export interface LeftOutKey {
  kid: string | undefined;
  /** Its `kty` (and `crv`) when it could be read: a token of another alg is not about this key. */
  type: string | undefined;
  reason: string;
}

/** What a kid names in the key set: RFC 7517 §4.5 lets keys of different types share one. */
interface KeysOfKid {
  usable: SigningKey[];
  leftOut: LeftOutKey[];
  /** Keys published for another use (`use: enc`), as unknown to a token as a kid never published. */
  notForSignatures: JsonWebKey[];
}

const NOTHING: KeysOfKid = { usable: [], leftOut: [], notForSignatures: [] };

/**
 * The issuer's key set as taken, key by key: a key malformed, unusable or weak (key-strength.ts) is left
 * out and the others serve. A token's key is the one of its kid whose type and curve fit its alg; two
 * such keys are ambiguous and refuse the token. Every refusal here is a 401: a left-out key is never
 * trusted and a token naming it cannot become valid by retrying; the operator learns of it from the
 * line logged when the key set was fetched.
 */
export class KeySet {
  readonly #byKid = new Map<string, KeysOfKid>();
  /** The keys left out, for the fetch to log. */
  readonly leftOut: LeftOutKey[] = [];

  constructor(publishedKeys: unknown[], nodeCrypto: NodeCrypto) {
    for (const entry of publishedKeys) {
      const kid = publishedKid(entry);
      const read = readPublishedKey(entry);
      if (kid === undefined) {
        const reason =
          "unusable" in read ? read.unusable : "it has no kid: this API takes only tokens naming their key";
        this.#leaveOut(undefined, undefined, reason);
        continue;
      }
      if (typeof (entry as JsonWebKey).kid !== "string") {
        this.#leaveOut(kid, undefined, "its kid is not a string");
        continue;
      }
      if (!("jwk" in read)) {
        this.#leaveOut(kid, undefined, read.unusable);
        continue;
      }
      const { jwk } = read;
      if (jwk.use !== undefined && jwk.use !== "sig") {
        this.#keysOf(kid).notForSignatures.push(jwk);
        continue;
      }
      if (jwk.key_ops !== undefined && !jwk.key_ops.includes("verify")) {
        this.#leaveOut(kid, keyType(jwk), "its key_ops do not include verify");
        continue;
      }
      const weakness = keyWeakness(jwk);
      const imported =
        weakness === undefined ? importVerificationKey(nodeCrypto, jwk) : { unusable: weakness };
      // A kty this API does not verify has no type an alg could fit: any token naming it is told why.
      const type = ["RSA", "EC", "OKP"].includes(jwk.kty) ? keyType(jwk) : undefined;
      if ("unusable" in imported) this.#leaveOut(kid, type, imported.unusable);
      else this.#keysOf(kid).usable.push({ jwk, type: keyType(jwk), key: imported.key });
    }
  }

  /** Whether the key set publishes anything under `kid`: if not, only a fresh key set could. */
  has(kid: string): boolean {
    return this.#byKid.has(kid);
  }

  /** The key that verifies a token naming `kid` and `algorithm`, or the 401 saying why there is none. */
  keyFor(kid: string, algorithm: JwsAlgorithm): SigningKey {
    const { usable, leftOut, notForSignatures } = this.#byKid.get(kid) ?? NOTHING;
    const fits = (type: string | undefined) => type === undefined || fitsKeyType(algorithm, type);
    const [candidate, ...others] = usable.filter((key) => fits(key.type));
    if (candidate !== undefined && others.length > 0) {
      throw new InvalidTokenError(
        "the token is invalid: the issuer publishes more than one key of its alg's type under its kid",
      );
    }
    if (candidate !== undefined) {
      // A key set may publish keys without `alg` (Entra ID's do), leaving the header to choose; a key
      // with one verifies only tokens of that alg.
      const { alg } = candidate.jwk;
      if (alg !== undefined && alg !== algorithm.name) throw algorithmNotAllowed();
      return candidate;
    }
    const unusable = leftOut.find((key) => fits(key.type));
    if (unusable !== undefined) {
      throw new InvalidTokenError(
        `the token is invalid: the issuer's key it names cannot be used: ${unusable.reason}`,
      );
    }
    if (notForSignatures.some((jwk) => fits(keyType(jwk)))) throw new InvalidTokenError(UNKNOWN_SIGNING_KEY);
    throw algorithmNotAllowed();
  }

  #keysOf(kid: string): KeysOfKid {
    let keys = this.#byKid.get(kid);
    if (keys === undefined) {
      keys = { usable: [], leftOut: [], notForSignatures: [] };
      this.#byKid.set(kid, keys);
    }
    return keys;
  }

  #leaveOut(kid: string | undefined, type: string | undefined, reason: string): void {
    const key = { kid, type, reason };
    this.leftOut.push(key);
    if (kid !== undefined) this.#keysOf(kid).leftOut.push(key);
  }
}
