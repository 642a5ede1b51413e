/** One HTTP request and its whole answer, up to a size cap, over the global (or an injected) fetch. */
import type { Clock } from "../lambda/clock.ts";
import { maskedExcerpt, PlantStoreError } from "./errors.ts";

export type FetchFunction = (input: string, init: RequestInit) => Promise<Response>;

/**
 * The largest answer body read: the API and the token endpoint answer a few hundred bytes (a plant of
 * the largest allowed fields is under 2 KiB). A longer body is not read on: its stream is cancelled and
 * the call throws, so that a wrong or hostile server cannot fill the caller's memory.
 */
export const MAX_ANSWER_BYTES = 64 * 1024;

export interface Exchange {
  status: number;
  headers: Headers;
  body: string;
}

/**
 * The answer, or, when none came (refused, reset, aborted), a PlantStoreError without a status. An
 * answer over MAX_ANSWER_BYTES is thrown as a PlantStoreError with its status, unread.
 */
export async function exchange(
  fetchFunction: FetchFunction,
  url: string,
  init: RequestInit,
  what: string,
): Promise<Exchange | PlantStoreError> {
  let response: Response;
  let body: string | undefined;
  try {
    response = await fetchFunction(url, init);
    body = await cappedText(response);
  } catch (error) {
    if (init.signal?.aborted) throw error; // a timeout or the caller's abort: requestWithRetries decides
    return new PlantStoreError(`${what}: no answer (${reasonOf(error)})`, { cause: error });
  }
  if (body === undefined) {
    throw new PlantStoreError(
      `${what} answered ${response.status} with a body over ${MAX_ANSWER_BYTES / 1024} KiB, which was not read`,
      { status: response.status },
    );
  }
  return { status: response.status, headers: response.headers, body };
}

/** The body as text, or undefined, its stream cancelled, once it is longer than MAX_ANSWER_BYTES. */
async function cappedText(response: Response): Promise<string | undefined> {
  const declared = Number(response.headers.get("content-length") ?? Number.NaN);
  if (declared > MAX_ANSWER_BYTES || !response.body) {
    await response.body?.cancel().catch(() => undefined);
    return declared > MAX_ANSWER_BYTES ? undefined : "";
  }
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let text = "";
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return text + decoder.decode();
    size += value.byteLength;
    if (size > MAX_ANSWER_BYTES) {
      await reader.cancel().catch(() => undefined);
      return undefined;
    }
    text += decoder.decode(value, { stream: true });
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

/** The request id an answer names: a header, so the server's word, masked like its body. */
export function maskedRequestId(headers: Headers, secrets: readonly string[]): string | undefined {
  const requestId = requestIdOf(headers);
  return requestId === undefined ? undefined : maskedExcerpt(requestId, secrets, 100);
}

/** Milliseconds as the whole seconds a PlantStoreError's retryAfterSeconds gives, rounded up. */
export function secondsOf(ms: number | undefined): number | undefined {
  return ms === undefined ? undefined : Math.ceil(ms / 1000);
}

function reasonOf(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const code = (error.cause as { code?: unknown } | undefined)?.code;
  return typeof code === "string" ? `${error.message}: ${code}` : error.message;
}
