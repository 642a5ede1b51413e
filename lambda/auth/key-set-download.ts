import * as http from "node:http";
import * as https from "node:https";
import { type Clock, timeoutSignal } from "../clock.ts";
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
 * The key-set download, on node:https (node:http for an http:// issuer); as aws-jwt-verify's,
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
    let answer: { status: number; body: Buffer };
    try {
      answer = await get(url, timeout.signal);
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

/** One GET: the answer's status and whole body. */
function get(url: URL, signal: AbortSignal): Promise<{ status: number; body: Buffer }> {
  const { request } = url.protocol === "http:" ? http : https;
  return new Promise((resolve, reject) => {
    const sent = request(url, { headers: { accept: "application/json" }, signal }, (response) => {
      const chunks: Buffer[] = [];
      response.on("data", (chunk: Buffer) => chunks.push(chunk)).on("error", reject);
      response.on("end", () => resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks) }));
    });
    sent.on("error", reject).end();
  });
}
