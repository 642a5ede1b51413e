/**
 * Retries safe by design: a create is idempotent (an identical replay answers 200) and a token request
 * changes nothing, so a failure that may be passing (429, 502, 503, 504, no answer, a timeout, even after
 * the request was sent) is tried again, like the AWS SDKs' standard mode: few attempts, full-jitter
 * backoff or the server's Retry-After (capped), all inside one deadline, each attempt with its own timeout,
 * and a retry quota per client: in an outage its calls soon stop retrying and fail at once, instead of
 * tripling the load on a struggling service.
 */
import { NO_RETRY_INCREMENT, RETRY_COST, RetryQuota, TRANSIENT_RETRY_COST } from "../lambda/store/retry.ts";
import { type Clock, sleep } from "./clock.ts";
import { PlantStoreError } from "./errors.ts";

/** The AWS SDKs' retry quota, the same as the function's own (lambda/store/retry.ts): one per client. */
export { RetryQuota };

export interface RetryOptions {
  /**
   * Requests per call, the first included (default 3). For createPlant these are POSTs, the one sent
   * again with a new token after the API refused a token among them; the token endpoint's requests
   * have the same limit of their own, within the same deadline.
   */
  maxAttempts?: number;
  /** Time for the whole call, waits and token requests included (default 10 s). */
  deadlineMs?: number;
  /** Time one request may take before it is abandoned and, if time is left, sent again (default 5 s). */
  attemptTimeoutMs?: number;
  /** The first backoff's ceiling; it doubles per attempt (default 100 ms). */
  baseDelayMs?: number;
  /** The backoff's largest ceiling (default 2 s). */
  maxDelayMs?: number;
  /** The longest Retry-After honoured; a longer one is waited this long (default 5 s). */
  maxRetryAfterMs?: number;
}

export type RetryPolicy = Required<RetryOptions>;

export const DEFAULT_RETRY_POLICY: RetryPolicy = {
  maxAttempts: 3,
  deadlineMs: 10_000,
  attemptTimeoutMs: 5_000,
  baseDelayMs: 100,
  maxDelayMs: 2_000,
  maxRetryAfterMs: 5_000,
};

/** The statuses worth another attempt: throttled, or the service or its gateway passing out. */
export const RETRYABLE_STATUSES: ReadonlySet<number> = new Set([429, 502, 503, 504]);

export function retryPolicyFrom(options: RetryOptions = {}): RetryPolicy {
  const policy = { ...DEFAULT_RETRY_POLICY };
  for (const [key, value] of Object.entries(options) as [keyof RetryPolicy, number | undefined][]) {
    if (value === undefined) continue;
    if (
      !Number.isFinite(value) ||
      value < 0 ||
      (key === "maxAttempts" && (value < 1 || !Number.isInteger(value)))
    ) {
      throw new TypeError(
        `retry.${key} must be a ${key === "maxAttempts" ? "whole number ≥ 1" : "number ≥ 0"}, got ${value}`,
      );
    }
    policy[key] = value;
  }
  return policy;
}

/** One attempt's outcome: its value, or a failure worth another attempt. Other failures are thrown. */
export type AttemptResult<T> =
  | { done: true; value: T }
  | {
      done: false;
      failure: PlantStoreError;
      retryAfterMs?: number | undefined;
      /**
       * Set when the next attempt needs something first (a new token after one was refused): run before
       * it, within the deadline; such a retry is sent at once and costs the retry quota nothing, since it
       * is no fault of the service. What it throws ends the call.
       */
      prepareNext?: (() => Promise<void>) | undefined;
    };

export interface RetryContext {
  policy: RetryPolicy;
  clock: Clock;
  /** In [0, 1), as Math.random. */
  random: () => number;
  /** Shared by every call of one client; a retry whose cost it cannot pay is not made. */
  quota: RetryQuota;
  /** The caller's signal: aborting it stops at once, with its reason, and is never retried. */
  signal?: AbortSignal | undefined;
  /** When the call must be over (clock time); now + deadlineMs when not given. */
  deadlineAt?: number;
  /** What is being called, for the timeout message (e.g. "POST http://…/plants"). */
  what: string;
}

/**
 * Runs `attempt` until it is done, throws, or the attempts or the deadline run out; then throws the last
 * failure. `attempt` gets a signal that aborts when its own timeout passes or the caller aborts; a
 * rejection it does not catch while that signal aborted for the timeout counts as a retryable timeout.
 */
export async function withRetries<T>(
  attempt: (signal: AbortSignal) => Promise<AttemptResult<T>>,
  context: RetryContext,
): Promise<T> {
  const { policy, clock, random, signal, quota, what } = context;
  const deadlineAt = context.deadlineAt ?? clock.now() + policy.deadlineMs;
  let lastRetryCost: number | undefined;
  let lastFailure: PlantStoreError | undefined;
  for (let attemptNumber = 1; ; attemptNumber++) {
    signal?.throwIfAborted();
    // Whole milliseconds left: a request is sent only with at least one to wait for its answer.
    const leftMs = Math.floor(deadlineAt - clock.now());
    if (leftMs < 1) throw lastFailure ?? deadlinePassed(what, policy.deadlineMs);
    const timeoutMs = Math.min(policy.attemptTimeoutMs, leftMs);
    const result = await timedAttempt(attempt, timeoutMs, context);
    if (result.done) {
      quota.refund(lastRetryCost ?? NO_RETRY_INCREMENT);
      return result.value;
    }
    const { failure, prepareNext } = result;
    lastFailure = failure;
    (failure as { attempts: number }).attempts = attemptNumber;
    if (attemptNumber >= policy.maxAttempts) throw failure;
    if (prepareNext) {
      await prepareNext();
      continue;
    }
    const delayMs =
      result.retryAfterMs === undefined
        ? random() * Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (attemptNumber - 1))
        : Math.min(result.retryAfterMs, policy.maxRetryAfterMs);
    // No attempt that could not finish before the deadline: the caller hears the failure now.
    if (clock.now() + delayMs >= deadlineAt) throw failure;
    // Throttling costs the quota less than a service passing out (5xx, no answer), as in the SDKs.
    const cost = failure.status === 429 ? RETRY_COST : TRANSIENT_RETRY_COST;
    if (!quota.tryTake(cost)) throw failure;
    lastRetryCost = cost;
    await sleep(clock, delayMs, signal);
  }
}

/** The call's deadline passed before its first request could be sent (spent getting a token, say). */
function deadlinePassed(what: string, deadlineMs: number): PlantStoreError {
  return new PlantStoreError(`${what}: not sent, the call's deadline of ${deadlineMs} ms had passed`, {
    attempts: 0,
  });
}

async function timedAttempt<T>(
  attempt: (signal: AbortSignal) => Promise<AttemptResult<T>>,
  timeoutMs: number,
  { clock, signal, what }: RetryContext,
): Promise<AttemptResult<T>> {
  const controller = new AbortController();
  let timedOut = false;
  const timeoutError = () =>
    new PlantStoreError(`${what}: no answer within ${timeoutMs} ms`, { cause: controller.signal.reason });
  const cancelTimer = clock.setTimer(() => {
    timedOut = true;
    controller.abort(new DOMException(`no answer within ${timeoutMs} ms`, "TimeoutError"));
  }, timeoutMs);
  const forwardAbort = () => controller.abort(signal?.reason);
  signal?.addEventListener("abort", forwardAbort, { once: true });
  try {
    const result = await attempt(controller.signal);
    if (signal?.aborted) throw signal.reason;
    if (!result.done && timedOut) return { done: false, failure: timeoutError() };
    return result;
  } catch (error) {
    if (signal?.aborted) throw signal.reason;
    if (timedOut) return { done: false, failure: timeoutError() };
    throw error;
  } finally {
    cancelTimer();
    signal?.removeEventListener("abort", forwardAbort);
  }
}
