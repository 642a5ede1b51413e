import { logWarning } from "../log.ts";
import { loadNodeCrypto } from "../node-crypto.ts";
import { type HeldKeySet, IssuerFetch, type IssuerKeysOptions } from "./issuer-fetch.ts";
import type { JwsAlgorithm } from "./jws.ts";
import { KeySet, reportLeftOutKeys, type SigningKey } from "./key-set.ts";

/**
 * The issuer's keys, kept so that the issuer is never on a request's path when it need not be, and its
 * faults are never blamed on the caller:
 * - the key set delivered at deploy time, if any, serves from the first request;
 * - a key in the key set held is used without a fetch, whatever the issuer is doing;
 * - a key not in it, a prefetch, or a refresh ask the issuer (issuer-fetch.ts): a refresh,
 *   started by refreshInBackground() after an answer and never awaited by a request, confirms a delivered
 *   set at once and then keeps the set at most KEY_SET_REFRESH_INTERVAL_SECONDS old.
 * Each key is taken or left out (key-set.ts) and imported into node:crypto once, when its set arrives.
 * Nothing is kept per token, per kid a token names or per issuer it claims: what this holds is bounded by
 * the issuer's key set.
 */
export class IssuerKeys {
  readonly #options: IssuerKeysOptions;
  readonly #held: HeldKeySet = { keySet: undefined, refreshDueAt: Number.POSITIVE_INFINITY };
  /** The delivered key set being imported (node:crypto loads first): the first requests wait for it. */
  #importingDelivered: Promise<void> | undefined;
  readonly #issuer: IssuerFetch;

  constructor(options: IssuerKeysOptions) {
    this.#options = options;
    this.#issuer = new IssuerFetch(options, this.#held);
    const delivered = options.deliveredKeySet;
    if (delivered) {
      this.#held.refreshDueAt = options.clock.now();
      this.#importingDelivered = loadNodeCrypto().then(async (nodeCrypto) => {
        try {
          this.#held.keySet = reportLeftOutKeys(await KeySet.parse(delivered, nodeCrypto));
        } catch (error) {
          logWarning("the key set delivered with the deployment is not usable; the issuer's is fetched", {
            detail: error instanceof Error ? error.message : String(error),
          });
        }
        this.#importingDelivered = undefined;
      });
    }
  }

  /** Whether a key set was delivered with the deployment (no fetch is needed before the first request). */
  get hasDeliveredKeys(): boolean {
    return Boolean(this.#options.deliveredKeySet);
  }

  /** The key `kid` names for a token of `algorithm`: from the key set held, else from the issuer. */
  async signingKey(kid: string, algorithm: JwsAlgorithm): Promise<SigningKey> {
    if (this.#importingDelivered) await this.#importingDelivered;
    const { keySet } = this.#held;
    if (keySet?.has(kid)) return keySet.keyFor(kid, algorithm);
    return this.#issuer.signingKey(kid, algorithm);
  }

  /** Fetches the key set now (the init-time prefetch, when none was delivered). */
  fetchKeySet(): Promise<KeySet> {
    return this.#issuer.fetchKeySet();
  }

  /** Starts a refresh of the key set when one is due, and returns at once: called after an answer. */
  refreshInBackground(): void {
    this.#issuer.refresh();
  }
}
