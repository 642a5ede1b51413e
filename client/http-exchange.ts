/** One HTTP request and its whole answer, over the global (or an injected) fetch. */
import type { Clock } from "./clock.ts";
import { PlantStoreError } from "./errors.ts";

export type FetchFunction = (input: string, init: RequestInit) => Promise<Response>;

export interface Exchange {
  status: number;
  headers: Headers;
  body: string;
}

/** The answer, or, when none came (refused, reset, aborted), a PlantStoreError without a status. */
export async function exchange(
  fetchFunction: FetchFunction,
  url: string,
  init: RequestInit,
  what: string,
): Promise<Exchange | PlantStoreError> {
  try {
    const response = await fetchFunction(url, init);
    return { status: response.status, headers: response.headers, body: await response.text() };
  } catch (error) {
    if (init.signal?.aborted) throw error; // a timeout or the caller's abort: withRetries decides
    return new PlantStoreError(`${what}: no answer (${reasonOf(error)})`, { cause: error });
  }
}

/** Retry-After in milliseconds (delta-seconds or an HTTP date), or undefined when absent or unreadable. */
export function retryAfterMs(headers: Headers, clock: Clock): number | undefined {
  const value = headers.get("retry-after")?.trim();
  if (!value) return undefined;
  if (/^\d+$/.test(value)) return Number(value) * 1000;
  // RFC 9110 §10.2.3: delay-seconds or an HTTP-date (`Sun, 06 Nov 1994 08:49:37 GMT`). Anything else
  // (`1.5`, `-1`) is no Retry-After at all: the usual backoff, not an immediate retry.
  if (!/^[A-Z][a-z]{2}, \d{2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} GMT$/.test(value)) return undefined;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - clock.now());
}

/** API Gateway's id of the request, as its HTTP API (or its REST API) sends it. */
export function requestIdOf(headers: Headers): string | undefined {
  return headers.get("apigw-requestid") ?? headers.get("x-amzn-requestid") ?? undefined;
}

function reasonOf(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const code = (error.cause as { code?: unknown } | undefined)?.code;
  return typeof code === "string" ? `${error.message}: ${code}` : error.message;
}
