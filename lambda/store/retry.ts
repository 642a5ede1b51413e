/**
 * Retries as the AWS SDKs' standard mode makes them: a few attempts per request, exponential backoff
 * with full jitter, and a retry quota shared by every request of the instance, so that in an outage the
 * instance stops retrying and fails fast instead of multiplying the load on a struggling service.
 */

export interface RetryPolicy {
  /** Attempts per request, the first included (the SDKs' default is 3). */
  maxAttempts: number;
  /** Time budget for all attempts together, from the first attempt's start. */
  deadlineMs: number;
  /** Time one attempt may take before it is abandoned. */
  attemptTimeoutMs: number;
  /** The wait before retry n (from 0) is random in [0, min(maxDelayMs, baseDelayMs × 2ⁿ)). */
  baseDelayMs: number;
  maxDelayMs: number;
}

/**
 * The SDK's error kinds that are worth a retry. A `transient` fault (no answer: timeout, reset,
 * refused, unreadable body; or a 500/502/503/504) suggests the service is unhealthy and costs the
 * quota more than a `throttling` or other `server-error` answer.
 */
export type RetryableFault = "transient" | "throttling" | "server-error";

/** The SDKs' quota numbers (standard mode). */
const RETRY_QUOTA_CAPACITY = 500;
export const RETRY_COST = 5;
export const TRANSIENT_RETRY_COST = 10;
export const NO_RETRY_INCREMENT = 1;

/**
 * The instance's retry budget (a token bucket). Each retry takes its cost out; a request that succeeds
 * without retrying puts 1 back, and one that succeeds after retries puts back the cost of its last
 * retry, as the SDK's StandardRetryStrategy does; never above the capacity. When a retry's cost is not
 * available, the request fails at once.
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

/** The time and randomness the retry loop uses; tests pass fake ones. */
export interface RetryEnvironment {
  now(): number;
  sleep(ms: number): Promise<void>;
  /** A signal that aborts with a TimeoutError after `ms`. */
  timeoutSignal(ms: number): AbortSignal;
  /** A number in [0, 1), for the jitter. */
  random(): number;
}

export const REAL_RETRY_ENVIRONMENT: RetryEnvironment = {
  now: () => performance.now(),
  sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
  timeoutSignal: (ms) => AbortSignal.timeout(ms),
  random: Math.random,
};

/** The request gave up: attempts, quota or time ran out. `cause` is the last attempt's failure. */
export class RetriesExhaustedError extends Error {
  override name = "RetriesExhaustedError";
}

export interface RetryOptions {
  policy: RetryPolicy;
  quota: RetryQuota;
  /** Which kind of retryable fault an error is, or undefined when it is not worth a retry. */
  classify: (error: unknown) => RetryableFault | undefined;
  environment?: RetryEnvironment;
}

/**
 * Runs `attempt` until it succeeds, fails with an error `classify` refuses, or a limit is reached: the
 * attempts, the quota, or the deadline (a backoff that would end past the deadline is not waited for).
 * Each attempt gets an AbortSignal that fires at its own timeout, never later than the deadline.
 */
export async function withRetries<T>(
  { policy, quota, classify, environment = REAL_RETRY_ENVIRONMENT }: RetryOptions,
  attempt: (signal: AbortSignal) => Promise<T>,
): Promise<T> {
  const deadline = environment.now() + policy.deadlineMs;
  let lastRetryCost: number | undefined;
  for (let attemptNumber = 1; ; attemptNumber++) {
    const remaining = deadline - environment.now();
    try {
      // Whole milliseconds: AbortSignal.timeout refuses fractions (performance.now() has them).
      const timeoutMs = Math.max(1, Math.floor(Math.min(policy.attemptTimeoutMs, remaining)));
      const result = await attempt(environment.timeoutSignal(timeoutMs));
      quota.refund(lastRetryCost ?? NO_RETRY_INCREMENT);
      return result;
    } catch (error) {
      const fault = classify(error);
      if (fault === undefined) throw error;
      const giveUp = (why: string) =>
        new RetriesExhaustedError(`gave up after ${attemptNumber} attempt(s): ${why}`, { cause: error });
      if (attemptNumber >= policy.maxAttempts) throw giveUp("attempts exhausted");
      const backoff =
        environment.random() * Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (attemptNumber - 1));
      if (environment.now() + backoff >= deadline) throw giveUp("deadline reached");
      const cost = fault === "transient" ? TRANSIENT_RETRY_COST : RETRY_COST;
      if (!quota.tryTake(cost)) throw giveUp("retry quota spent");
      lastRetryCost = cost;
      await environment.sleep(backoff);
    }
  }
}
