import { FetchError, NonRetryableFetchError } from "aws-jwt-verify/error";
import type { Fetcher } from "aws-jwt-verify/https";
import { sendRequest } from "../transport/http-request.ts";

/**
 * aws-jwt-verify's key-set download, on node:http like the store's calls (see http-request.ts).
 * Like the library's own fetcher: one immediate retry on a network fault, none on a non-200 answer;
 * its FetchError tells the authenticator that the issuer, not the token, is at fault. Each attempt
 * ends when `timeoutSignal(timeoutMs)` fires; tests pass a signal they abort instead of waiting.
 */
export function createJwksFetcher(
  timeoutMs: number,
  timeoutSignal: (ms: number) => AbortSignal = AbortSignal.timeout,
): Fetcher {
  const fetchOnce = async (uri: string): Promise<ArrayBuffer> => {
    let answer: Awaited<ReturnType<typeof sendRequest>>;
    try {
      answer = await sendRequest({
        method: "GET",
        url: new URL(uri),
        headers: { accept: "application/json" },
        signal: timeoutSignal(timeoutMs),
      });
    } catch (error) {
      throw new FetchError(uri, error instanceof Error ? error.message : String(error));
    }
    if (answer.status !== 200) {
      throw new NonRetryableFetchError(uri, `Status code is ${answer.status}, expected 200`);
    }
    const { buffer, byteOffset, byteLength } = answer.body;
    return buffer.slice(byteOffset, byteOffset + byteLength) as ArrayBuffer;
  };
  return {
    async fetch(uri) {
      try {
        return await fetchOnce(uri);
      } catch (error) {
        if (error instanceof NonRetryableFetchError) throw error;
        return fetchOnce(uri);
      }
    },
  };
}
