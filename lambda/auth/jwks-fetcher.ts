import { sendRequest } from "../transport/http-request.ts";

/** How the issuer's key set is downloaded: the body of a 200, or a KeySetFetchError. */
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
 * The key-set download, on node:http like the store's calls (see http-request.ts). As aws-jwt-verify's
 * fetcher did: one immediate retry on a network fault, none on a non-200 answer. Each attempt ends when
 * `timeoutSignal(timeoutMs)` fires; tests pass a signal they abort instead of waiting.
 */
export function createJwksFetcher(
  timeoutMs: number,
  timeoutSignal: (ms: number) => AbortSignal = AbortSignal.timeout,
  observeFetch?: KeySetFetchObserver,
): KeySetFetcher {
  const fetchOnce = async (uri: string): Promise<Uint8Array> => {
    let answer: Awaited<ReturnType<typeof sendRequest>>;
    const ended = observeFetch?.(uri);
    try {
      answer = await sendRequest({
        method: "GET",
        url: new URL(uri),
        headers: { accept: "application/json" },
        signal: timeoutSignal(timeoutMs),
      });
    } catch (error) {
      ended?.({ failure: error });
      throw new KeySetFetchError(uri, error instanceof Error ? error.message : String(error), true);
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
        if (error instanceof KeySetFetchError && !error.retryable) throw error;
        return fetchOnce(uri);
      }
    },
  };
}
