/**
 * The fetch that openapi-fetch and oauth4webapi are given: one HTTP request over the global (or the
 * caller's) fetch, and its whole answer, read up to a size cap, handed back to them as a Response. A
 * redirect is never followed: a request is sent once per attempt, to the URL configured and nowhere else.
 */
import { parse, parseNumberAndBigInt } from "lossless-json";
import type { Clock } from "./clock.ts";
import { kindOfStatus, PlantStoreError, type PlantStoreErrorDetails } from "./errors.ts";
import type { SecretMask } from "./masking.ts";
import { RETRYABLE_STATUSES, RetryableFailure } from "./retry.ts";

export type FetchFunction = (input: string, init: RequestInit) => Promise<Response>;

/**
 * The largest answer body read: the API and the token endpoint answer a few hundred bytes (a plant of
 * the largest allowed fields is under 2 KiB). A longer body is not read on: its stream is cancelled and
 * the call throws, so that a wrong or hostile server cannot fill the caller's memory.
 */
export const MAX_ANSWER_BYTES = 64 * 1024;

/** What a request is, for messages, and what they must never show. @internal */
export interface Endpoint {
  /** The call as messages name it, e.g. "POST http://127.0.0.1:3000/plants". */
  what: string;
  /** The option that names the URL, for the advice a redirect gets ("baseUrl", "credentials.tokenUrl"). */
  option: string;
  fetch: FetchFunction;
  mask: SecretMask;
}

/**
 * No answer came (refused, reset, DNS, a browser's refusal, a body cut off): a `network` failure to retry,
 * and whether the runtime says that no connection was ever made, so that nothing was sent. Thrown through
 * the libraries, which pass what their fetch throws on. @internal
 */
export class NoAnswer extends RetryableFailure {
  constructor(
    failure: PlantStoreError,
    readonly neverConnected = false,
  ) {
    super(failure);
  }
}

/**
 * Node's codes (of the fetch error's cause) for a request that never reached a server. A browser says no
 * more than "Failed to fetch", so there any failure may have reached it.
 */
const NEVER_CONNECTED_CODES = [
  "ECONNREFUSED",
  "ENOTFOUND",
  "EAI_AGAIN",
  "ENETUNREACH",
  "EHOSTUNREACH",
  "UND_ERR_CONNECT_TIMEOUT",
];

/**
 * `value` as a URL, or a TypeError naming the option and the value: only an absolute http: or https: URL
 * without credentials is fetched. "localhost:3000" parses (as the scheme `localhost:`), and would fail only
 * once called.
 * @internal
 */
export function httpUrlOf(value: unknown, option: string, example: string): URL {
  const url = URL.canParse(value as string) ? new URL(value as string) : undefined;
  if (url?.protocol !== "http:" && url?.protocol !== "https:") {
    throw new TypeError(
      `${option} must be an absolute http(s) URL such as ${example}, got ${JSON.stringify(value)}`,
    );
  }
  // fetch refuses such a URL on every call; its user and password are not repeated here.
  if (url.username || url.password) {
    throw new TypeError(`${option} must not hold a user name or password (user:password@)`);
  }
  return url;
}

/**
 * The answer to `url`, its body read whole. Throws NoAnswer when none came whole, and a PlantStoreError
 * for a redirect or an answer over MAX_ANSWER_BYTES. @internal
 */
export async function exchange({ what, option, fetch, mask }: Endpoint, url: string, init: RequestInit) {
  const signal = init.signal ?? undefined;
  let response: Response;
  try {
    // A fetch of the caller's may ignore the signal: the exchange stops waiting when it aborts all the same.
    response = await unlessAborted(fetch(url, { ...init, redirect: "manual" }), signal, discardBody);
  } catch (error) {
    if (signal?.aborted) throw error; // a timeout or the caller's abort: requestWithRetries decides
    // Only words, masked: the runtime's error (undici's holds the URL it failed on) is never kept.
    const reason = mask.excerpt(reasonOf(error));
    const failure = new PlantStoreError(`${what}: no answer (${reason})${browserHint(url)}`, {
      kind: "network",
    });
    throw new NoAnswer(failure, NEVER_CONNECTED_CODES.includes(causeCodeOf(error) ?? ""));
  }
  const { status, headers } = response;
  // A 3xx (Node), an opaque redirect (a browser hides its status), or an answer a fetch of the caller's
  // reached by following one anyway: not from the URL asked.
  const redirectStatus = status >= 300 && status < 400 ? status : undefined;
  if (response.type === "opaqueredirect" || redirectStatus || response.redirected) {
    discardBody(response);
    const location = headers.get("location");
    const to = location ? ` to ${mask.excerpt(location, 300)}` : "";
    const redirect = redirectStatus ? `answered ${status}, a redirect` : "was redirected";
    throw new PlantStoreError(
      `${what} ${redirect}${to}, which the client never follows: set ${option} to the URL that answers itself`,
      { kind: "redirect", status: redirectStatus },
    );
  }
  let body: string | undefined;
  try {
    body = await unlessAborted(cappedText(response, signal), signal);
  } catch (error) {
    if (signal?.aborted) throw error;
    // The answer was cut off (a connection reset midway): lost, as if none had come, and retried; but the
    // request had reached the server, whatever it did with it.
    const failure = new PlantStoreError(
      `${what}: answered ${status}, but its body was cut off (${mask.excerpt(reasonOf(error))})`,
      { kind: "network", requestId: requestIdOf(headers, mask) },
    );
    throw new NoAnswer(failure);
  }
  if (body === undefined) {
    throw new PlantStoreError(
      `${what} answered ${status} with a body over ${MAX_ANSWER_BYTES / 1024} KiB, which was not read`,
      { kind: "unexpected-answer", status },
    );
  }
  return new Response(body === "" ? null : body, { status, headers });
}

/**
 * What `pending` gives, or the signal's reason as soon as it aborts, whatever `pending` does then: what it
 * gives after that is handed to `late`. @internal
 */
export function unlessAborted<T>(
  pending: Promise<T>,
  signal: AbortSignal | undefined,
  late?: (value: T) => void,
): Promise<T> {
  if (!signal) return pending;
  return new Promise((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    if (signal.aborted) onAbort();
    signal.addEventListener("abort", onAbort, { once: true });
    pending.then(
      (value) => {
        signal.removeEventListener("abort", onAbort);
        if (signal.aborted) late?.(value);
        else resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener("abort", onAbort);
        reject(error);
      },
    );
  });
}

/**
 * The body as text, or undefined, its stream cancelled, once it is longer than MAX_ANSWER_BYTES. An abort
 * cancels the stream too: the exchange has stopped waiting for it.
 */
async function cappedText(response: Response, signal: AbortSignal | undefined): Promise<string | undefined> {
  if (!response.body) return "";
  const reader = response.body.getReader();
  const cancel = () => void reader.cancel().catch(() => undefined);
  signal?.addEventListener("abort", cancel, { once: true });
  try {
    const decoder = new TextDecoder();
    let text = "";
    for (let size = 0; ; ) {
      const { done, value } = await reader.read();
      if (done) return text + decoder.decode();
      size += value.byteLength;
      if (size > MAX_ANSWER_BYTES) return void cancel();
      text += decoder.decode(value, { stream: true });
    }
  } finally {
    signal?.removeEventListener("abort", cancel);
  }
}

/** Leaves the body unread: a web stream is cancelled, another (node-fetch's Node stream) left as it is. */
function discardBody(response: Response): void {
  const body = response.body as { cancel?: () => Promise<void> } | null;
  void body?.cancel?.().catch(() => undefined);
}

/** The runtime's words for a fetch that got no answer: its message, and the code of its cause (Node's). */
function reasonOf(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const code = causeCodeOf(error);
  return code === undefined ? error.message : `${error.message}: ${code}`;
}

/** The code of a fetch error's cause: Node's, on its own error or on the AggregateError of its attempts. */
function causeCodeOf(error: unknown): string | undefined {
  const code = error instanceof Error ? (error.cause as { code?: unknown } | undefined)?.code : undefined;
  return typeof code === "string" ? code : undefined;
}

/**
 * In a browser, what a fetch with no answer may be: the browser tells the page only "Failed to fetch"
 * (Chromium), "NetworkError when attempting to fetch resource." (Firefox) or "Load failed" (Safari), and
 * the reason only in its console.
 */
function browserHint(url: string): string {
  const page = (globalThis as { location?: { origin?: unknown; protocol?: unknown } }).location;
  if (typeof page?.origin !== "string" || !/^https?:$/.test(String(page.protocol))) return "";
  const target = new URL(url);
  const loopback = /^(localhost|\[::1\]|127\.\d+\.\d+\.\d+)$/.test(target.hostname);
  if (page.protocol === "https:" && target.protocol === "http:" && !loopback) {
    return `. This https page may not call an http URL (mixed content): use ${url.replace(/^http:/, "https:")}`;
  }
  const cors =
    target.origin === page.origin
      ? ""
      : ` the API may not allow this page's origin ${page.origin} (CORS: add it to the API's allowed ` +
        "origins, corsAllowOrigins for the stack, PLANTS_CORS_ALLOW_ORIGINS for npm start),";
  return (
    `. The browser gives no reason:${cors} the server may be down or unreachable, or an extension or ` +
    "policy blocked the request; the browser's console says which"
  );
}

/**
 * What an answer other than 200 is: a PlantStoreError that `make` builds (a TokenEndpointError for the
 * token endpoint's) with its status's kind, its request id and the Retry-After it asked for; a
 * RetryableFailure around it when the status is worth another attempt. @internal
 */
export function failureOf<E extends PlantStoreError>(
  answer: Response,
  { mask, clock }: { mask: SecretMask; clock: Clock },
  make: (status: number, details: PlantStoreErrorDetails) => E,
): E | RetryableFailure {
  const { status, headers } = answer;
  const waitMs = retryAfterMs(headers, clock);
  const retryAfterSeconds = waitMs === undefined ? undefined : Math.ceil(waitMs / 1000);
  const failure = make(status, {
    kind: kindOfStatus(status),
    status,
    retryAfterSeconds,
    requestId: requestIdOf(headers, mask),
  });
  return RETRYABLE_STATUSES.has(status) ? new RetryableFailure(failure, waitMs) : failure;
}

/** Retry-After in milliseconds (delta-seconds or an HTTP date), or undefined when absent or unreadable. */
function retryAfterMs(headers: Headers, clock: Clock): number | undefined {
  const value = headers.get("retry-after")?.trim();
  if (!value) return undefined;
  if (/^\d+$/.test(value)) return Number(value) * 1000;
  // RFC 9110 §10.2.3: delay-seconds or an HTTP-date (`Sun, 06 Nov 1994 08:49:37 GMT`). Anything else
  // (`1.5`, `-1`) is no Retry-After at all: the usual backoff, not an immediate retry.
  if (!/^[A-Z][a-z]{2}, \d{2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} GMT$/.test(value)) return undefined;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - clock.now());
}

/** The request id an answer names (API Gateway's HTTP API or REST API header): the server's word, masked. @internal */
export function requestIdOf(headers: Headers, mask: SecretMask): string | undefined {
  const requestId = headers.get("apigw-requestid") ?? headers.get("x-amzn-requestid") ?? undefined;
  return requestId === undefined ? undefined : mask.excerpt(requestId, 100);
}

/** The JSON object a body holds, read by lossless-json (an int64 stays exact), or undefined. @internal */
export function jsonObject(body: string): Record<string, unknown> {
  try {
    const value = parse(body, null, parseNumberAndBigInt);
    if (typeof value === "object" && value !== null && !Array.isArray(value))
      return value as Record<string, unknown>;
  } catch {}
  return {};
}
