/**
 * The one retry strategy, in the shape of the AWS SDKs' standard mode: a few attempts per call, each with
 * its own timeout; between them a full-jitter exponential backoff, or the wait the server asked for
 * (Retry-After, capped); a retry quota shared by every call of an instance, so that in an outage it stops
 * retrying and fails fast instead of multiplying the load on a struggling service; all inside a deadline.
 * Each caller says only which failures it retries and of what kind (which decides what a retry costs the
 * quota); how it reports the final failure is its own. Pure: no Node API, so that the client can share it.
 */
import { type Clock, systemClock, timeoutReason } from "../clock.ts";

export interface RetryPolicy {
  /** Attempts per call, the first included (the SDKs' default is 3). */
  maxAttempts: number;
  /** The wait before retry n (from 0; a follow-up is none) is random in [0, min(maxDelayMs, baseDelayMs × 2ⁿ)). */
  baseDelayMs: number;
  maxDelayMs: number;
  /** Time for all attempts and waits together, from the first attempt's start; none when not given. */
  deadlineMs?: number;
  /** Time one attempt may take before its signal aborts; none when not given. */
  attemptTimeoutMs?: number;
  /** The longest Retry-After honoured: a longer one is waited this long (maxDelayMs when not given). */
  maxRetryAfterMs?: number;
}

/**
 * Why a failed attempt is followed by another. A fault of one of the SDKs' kinds: `transient` (no answer:
 * timeout, reset, refused, unreadable body; or a 500/502/503/504) suggests the service is unhealthy and
 * costs the quota more than `throttling` or another `server-error`. Or `follow-up`: no fault, the attempt
 * did its part and the call needs one more at once (the store's read after a conflict that came without
 * the stored item): it counts as an attempt, with no wait and no cost.
 */
export type RetryReason = "transient" | "throttling" | "server-error" | "follow-up";

/** The SDKs' quota numbers (standard mode). */
const RETRY_QUOTA_CAPACITY = 500;
export const RETRY_COST = 5;
export const TRANSIENT_RETRY_COST = 10;
const NO_RETRY_INCREMENT = 1;

const COSTS: Record<Exclude<RetryReason, "follow-up">, number> = {
  transient: TRANSIENT_RETRY_COST,
  throttling: RETRY_COST,
  "server-error": RETRY_COST,
};

/**
 * The instance's retry budget (a token bucket). Each retry takes its cost out; a call that succeeds
 * without retrying puts 1 back, and one that succeeds after retries puts back the cost of its last
 * retry, as the SDK's StandardRetryStrategy does; never above the capacity. When a retry's cost is not
 * available, the call fails at once.
 */
export class RetryQuota {
  #available: number;

  constructor(readonly capacity = RETRY_QUOTA_CAPACITY) {
    this.#available = capacity;
  }

  get available(): number {
    return this.#available;
  }

  tryTake(cost: number): boolean {
    if (this.#available < cost) return false;
    this.#available -= cost;
    return true;
  }

  refund(amount: number): void {
    this.#available = Math.min(this.capacity, this.#available + amount);
  }
}

export type GiveUpReason = "attempts exhausted" | "deadline reached" | "retry quota spent";

/** The call gave up: attempts, deadline or quota ran out. `cause` is the last attempt's failure. */
export class RetriesExhaustedError extends Error {
  override name = "RetriesExhaustedError";
  constructor(
    readonly attempts: number,
    readonly reason: GiveUpReason,
    options?: ErrorOptions,
  ) {
    super(`gave up after ${attempts} attempt(s): ${reason}`, options);
  }
}

export interface RetryOptions {
  policy: RetryPolicy;
  /** Why a failure is worth another attempt, or undefined when it is not: then it is thrown as it is. */
  classify: (error: unknown) => RetryReason | undefined;
  /** The wait a failure asks for (a Retry-After, in ms), used instead of the backoff, up to its cap. */
  retryAfterMs?: (error: unknown) => number | undefined;
  /**
   * What the retry after `error` needs first (the client's new token after one was refused): run once the
   * attempts allow a retry, before the deadline is checked and the wait, so that its time counts against
   * the deadline. What it throws ends the call.
   */
  prepareRetry?: (error: unknown) => Promise<void>;
  /** Shared by every call of one instance or client; none: only the attempts and the deadline bound. */
  quota?: RetryQuota;
  /** What is thrown when the retries run out; the RetriesExhaustedError itself when not given. */
  giveUp?: (exhausted: RetriesExhaustedError) => unknown;
  clock?: Clock;
  /** In [0, 1), as Math.random (the default): the jitter. */
  random?: () => number;
  /** The caller's signal: aborting it ends the call at once with its reason (even a success), never retried. */
  signal?: AbortSignal;
  /** When the call must be over (clock time), instead of now + policy.deadlineMs. */
  deadlineAt?: number;
}

const NO_LIMIT = Number.POSITIVE_INFINITY;
/** The signal of an attempt that nothing limits. */
const NEVER_ABORTED = new AbortController().signal;

/**
 * Runs `attempt` until it succeeds, fails with a failure `classify` refuses, or a limit is reached: the
 * attempts, the deadline (an attempt is made only with a whole millisecond left to wait for its answer, a
 * wait that would end past it is not waited for), or the quota. Each attempt gets a signal that aborts at
 * its own timeout, never later than the deadline, or with the caller's signal; and its number, from 1.
 */
export async function withRetries<T>(
  options: RetryOptions,
  attempt: (signal: AbortSignal, attemptNumber: number) => Promise<T>,
): Promise<T> {
  const { policy, classify, quota, clock = systemClock, random = Math.random, signal } = options;
  const deadlineAt =
    options.deadlineAt ?? (policy.deadlineMs === undefined ? NO_LIMIT : clock.now() + policy.deadlineMs);
  let lastFailure: { error: unknown } | undefined;
  const giveUp = (attempts: number, why: GiveUpReason) => {
    const exhausted = new RetriesExhaustedError(attempts, why, lastFailure && { cause: lastFailure.error });
    return options.giveUp ? options.giveUp(exhausted) : exhausted;
  };
  let lastRetryCost: number | undefined;
  let retriesMade = 0;
  for (let attemptNumber = 1; ; attemptNumber++) {
    signal?.throwIfAborted();
    const leftMs = Math.floor(deadlineAt - clock.now());
    if (leftMs < 1) throw giveUp(attemptNumber - 1, "deadline reached");
    let result: T;
    try {
      result = await limitedAttempt(attempt, attemptNumber, leftMs, options);
    } catch (error) {
      if (signal?.aborted) throw signal.reason;
      const reason = classify(error);
      if (reason === undefined) throw error;
      lastFailure = { error };
      if (attemptNumber >= policy.maxAttempts) throw giveUp(attemptNumber, "attempts exhausted");
      await options.prepareRetry?.(error);
      const delayMs = reason === "follow-up" ? 0 : retryDelay(error, retriesMade, options, random);
      if (clock.now() + delayMs >= deadlineAt) throw giveUp(attemptNumber, "deadline reached");
      if (reason === "follow-up") continue;
      const cost = COSTS[reason];
      if (quota && !quota.tryTake(cost)) throw giveUp(attemptNumber, "retry quota spent");
      lastRetryCost = cost;
      retriesMade++;
      await clock.sleep(delayMs, signal);
      continue;
    }
    // The caller gave up while the attempt succeeded: it hears its abort, as it would a moment later.
    signal?.throwIfAborted();
    quota?.refund(lastRetryCost ?? NO_RETRY_INCREMENT);
    return result;
  }
}

/** The wait before retry n (from 0): the failure's Retry-After up to its cap, else full jitter. */
function retryDelay(
  error: unknown,
  n: number,
  { policy, retryAfterMs }: RetryOptions,
  random: () => number,
): number {
  const asked = retryAfterMs?.(error);
  if (asked !== undefined) return Math.min(asked, policy.maxRetryAfterMs ?? policy.maxDelayMs);
  return random() * Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** n);
}

/** One attempt, its signal aborted at its timeout (or the deadline, `leftMs` away) or with the caller's signal. */
async function limitedAttempt<T>(
  attempt: (signal: AbortSignal, attemptNumber: number) => Promise<T>,
  attemptNumber: number,
  leftMs: number,
  { policy, signal, clock = systemClock }: RetryOptions,
): Promise<T> {
  const timeoutMs = Math.min(policy.attemptTimeoutMs ?? NO_LIMIT, leftMs);
  if (timeoutMs === NO_LIMIT && signal === undefined) {
    return attempt(NEVER_ABORTED, attemptNumber);
  }
  const controller = new AbortController();
  const cancelTimer =
    timeoutMs === NO_LIMIT
      ? undefined
      : clock.setTimer(() => controller.abort(timeoutReason(timeoutMs)), timeoutMs);
  const forwardAbort = () => controller.abort(signal?.reason);
  signal?.addEventListener("abort", forwardAbort, { once: true });
  try {
    return await attempt(controller.signal, attemptNumber);
  } finally {
    cancelTimer?.();
    signal?.removeEventListener("abort", forwardAbort);
  }
}
