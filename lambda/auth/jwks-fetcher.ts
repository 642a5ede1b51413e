import type { Clock } from "../clock.ts";
import { type RetryOptions, withRetries } from "../retry/standard-retry.ts";
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
 * fetcher did: one immediate retry on a network fault, none on a non-200 answer. Each attempt has
 * `timeoutMs` on `clock` to answer; tests move a fake clock instead of waiting.
 */
export function createJwksFetcher(
  timeoutMs: number,
  clock: Clock,
  observeFetch?: KeySetFetchObserver,
): KeySetFetcher {
  const fetchOnce = async (uri: string, signal: AbortSignal): Promise<Uint8Array> => {
    let answer: Awaited<ReturnType<typeof sendRequest>>;
    const ended = observeFetch?.(uri);
    try {
      answer = await sendRequest({
        method: "GET",
        url: new URL(uri),
        headers: { accept: "application/json" },
        signal,
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
  /** Once more at once after a network fault, never after an answer; the last failure is reported as it is. */
  const oneImmediateRetry: RetryOptions = {
    policy: { maxAttempts: 2, baseDelayMs: 0, maxDelayMs: 0, attemptTimeoutMs: timeoutMs },
    classify: (error) => (error instanceof KeySetFetchError && error.retryable ? "transient" : undefined),
    giveUp: (exhausted) => exhausted.cause,
    clock,
  };
  return { fetch: (uri) => withRetries(oneImmediateRetry, (signal) => fetchOnce(uri, signal)) };
}
