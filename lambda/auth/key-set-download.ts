import { type Clock, timeoutSignal } from "../clock.ts";
import { sendRequest } from "../transport/http-request.ts";
import { isKeySetError, keySetError } from "./key-set.ts";

/** Time the issuer has to answer one key-set request. */
export const JWKS_RESPONSE_TIMEOUT_MS = 1000;

/** How the key set is downloaded: the body of a 200, or a KeySetError named KeySetFetchError. */
export interface KeySetFetcher {
  fetch(uri: string): Promise<Uint8Array>;
}

/** How one download ended, for an observer: the answer's status, or why none came; never the body. */
export interface KeySetFetchOutcome {
  status?: number;
  failure?: unknown;
}

/** Told of a download as it starts; what it returns, if anything, as it ends (lambda/tracing/). */
export type KeySetFetchObserver = (url: string) => ((outcome: KeySetFetchOutcome) => void) | undefined;

/**
 * The key-set download, on lambda/transport/http-request.ts like the store's calls; as aws-jwt-verify's,
 * once more at once after a network fault, never after an answer; `timeoutMs` on `clock` per request.
 */
export function createJwksFetcher(
  timeoutMs: number,
  clock: Clock,
  observeFetch?: KeySetFetchObserver,
): KeySetFetcher {
  const fetchOnce = async (uri: string): Promise<Uint8Array> => {
    const ended = observeFetch?.(uri);
    const url = new URL(uri);
    // Where the key set is, without query or credentials: a key in either is not for the logs.
    const failed = (detail: string, retryable: boolean) =>
      keySetError("KeySetFetchError", `fetching ${url.origin}${url.pathname} failed: ${detail}`, retryable);
    const timeout = timeoutSignal(clock, timeoutMs);
    let answer: Awaited<ReturnType<typeof sendRequest>>;
    try {
      answer = await sendRequest({
        method: "GET",
        url,
        headers: { accept: "application/json" },
        signal: timeout.signal,
      });
    } catch (error) {
      ended?.({ failure: error });
      throw failed(error instanceof Error ? error.message : String(error), true);
    } finally {
      timeout.cancel();
    }
    ended?.({ status: answer.status });
    if (answer.status !== 200) {
      throw failed(`status code is ${answer.status}, expected 200`, false);
    }
    return answer.body;
  };
  return {
    async fetch(uri) {
      try {
        return await fetchOnce(uri);
      } catch (error) {
        if (!(isKeySetError(error) && error.retryable)) throw error;
        return fetchOnce(uri);
      }
    },
  };
}
