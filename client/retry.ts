/**
 * Retries safe by design: a create is idempotent (an identical replay answers 200) and a token request
 * changes nothing, so a failure that may be passing (429, 502, 503, 504, no answer, a timeout, even after
 * the request was sent) is tried again, with the function's own retry strategy (the AWS SDKs' standard
 * mode, lambda/retry/standard-retry.ts): few attempts, full-jitter backoff or the server's Retry-After
 * (capped), all inside one deadline, each attempt with its own timeout, and a retry quota per client: in
 * an outage its calls soon stop retrying and fail at once, instead of tripling the load on a struggling
 * service. This file says what the client retries, and what its caller hears when the retries run out.
 */
import type { Clock } from "../lambda/clock.ts";
import { type RetryQuota, type RetryReason, withRetries } from "../lambda/retry/standard-retry.ts";
import { PlantStoreError } from "./errors.ts";

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

/**
 * A failure worth another attempt, as an attempt throws it: what the caller hears if it is the last, the
 * wait its answer asked for, and what the next attempt needs first, if anything.
 */
export class RetryableFailure {
  constructor(
    readonly failure: PlantStoreError,
    readonly retryAfterMs?: number | undefined,
    /**
     * Set when the next attempt needs something first (a new token after one was refused): run before
     * it, within the deadline; such a retry is sent at once and costs the retry quota nothing, since it
     * is no fault of the service. What it throws ends the call.
     */
    readonly prepareNext?: (() => Promise<void>) | undefined,
  ) {}

  /** Throttling (429) costs the quota less than a service passing out (5xx, no answer), as in the SDKs. */
  get reason(): RetryReason {
    if (this.prepareNext) return "follow-up";
    return this.failure.status === 429 ? "throttling" : "transient";
  }
}

export interface RetryContext {
  policy: RetryPolicy;
  clock: Clock;
  /** In [0, 1), as Math.random. */
  random: () => number;
  /** Shared by every call of one client; a retry whose cost it cannot pay is not made. */
  quota: RetryQuota;
  /** The caller's signal: aborting it stops at once, with its reason, and is never retried. */
  signal?: AbortSignal | undefined;
  /** When the call must be over (clock time). */
  deadlineAt: number;
  /** What is being called, for the timeout message (e.g. "POST http://…/plants"). */
  what: string;
}

/**
 * Runs `attempt` until it gives its value, throws anything but a RetryableFailure, or the attempts, the
 * deadline or the quota run out; then throws the last failure. Every PlantStoreError thrown says how many
 * requests were sent. `attempt` gets a signal that aborts when its own timeout passes or the caller
 * aborts; whatever it throws once its timeout has passed is a retryable timeout.
 */
export function requestWithRetries<T>(
  context: RetryContext,
  attempt: (signal: AbortSignal) => Promise<T>,
): Promise<T> {
  const { policy, clock, random, quota, signal, deadlineAt, what } = context;
  return withRetries(
    {
      policy,
      clock,
      random,
      quota,
      ...(signal ? { signal } : {}),
      deadlineAt,
      classify: (error) => (error instanceof RetryableFailure ? error.reason : undefined),
      retryAfterMs: (error) => (error instanceof RetryableFailure ? error.retryAfterMs : undefined),
      prepareRetry: async (error) => {
        if (error instanceof RetryableFailure) await error.prepareNext?.();
      },
      giveUp: ({ cause }) =>
        cause instanceof RetryableFailure ? cause.failure : deadlinePassed(what, policy.deadlineMs),
    },
    async (attemptSignal, attemptNumber) => {
      try {
        return await attempt(attemptSignal);
      } catch (error) {
        throw countedAs(timedOut(attemptSignal, what) ?? error, attemptNumber);
      }
    },
  );
}

/** The failure of an attempt whose own timeout passed (its signal's reason, a TimeoutError), if it did. */
function timedOut(signal: AbortSignal, what: string): RetryableFailure | undefined {
  const reason: unknown = signal.reason;
  const passed = signal.aborted && reason instanceof DOMException && reason.name === "TimeoutError";
  if (!passed) return undefined;
  return new RetryableFailure(new PlantStoreError(`${what}: ${reason.message}`, { cause: reason }));
}

/** The failure, its PlantStoreError saying it came of the request numbered `attempts`. */
function countedAs(error: unknown, attempts: number): unknown {
  const failure = error instanceof RetryableFailure ? error.failure : error;
  if (failure instanceof PlantStoreError) (failure as { attempts: number }).attempts = attempts;
  return error;
}

/** The call's deadline passed before its first request could be sent (spent getting a token, say). */
function deadlinePassed(what: string, deadlineMs: number): PlantStoreError {
  return new PlantStoreError(`${what}: not sent, the call's deadline of ${deadlineMs} ms had passed`, {
    attempts: 0,
  });
}
