/**
 * The store's retry strategy, the AWS SDKs' standard mode: a few attempts, each with its timeout, a
 * full-jitter backoff, a retry quota per instance (in an outage it fails fast instead of multiplying the
 * load), all inside a deadline. The caller says which failures it retries, of what kind, and what it throws.
 */
import { type Clock, systemClock, timeoutSignal } from "../clock.ts";

export interface RetryPolicy {
  /** Attempts per call, the first included (the SDKs' default is 3). */
  maxAttempts: number;
  /** The wait before retry n (from 0) is random in [0, min(maxDelayMs, baseDelayMs × 2ⁿ)). */
  baseDelayMs: number;
  maxDelayMs: number;
  /** Time for all attempts and waits together, from the first attempt's start; none when not given. */
  deadlineMs?: number;
  /** Time one attempt may take before its signal aborts; none when not given. */
  attemptTimeoutMs?: number;
}

/**
 * Why a failed attempt is followed by another, as the SDKs classify faults: `transient` (no answer:
 * timeout, reset, refused, unreadable body; or a 500/502/503/504) suggests the service is unhealthy and
 * costs the quota more than `throttling` or another `server-error`.
 */
export type RetryReason = "transient" | "throttling" | "server-error";

/** The SDKs' quota numbers (standard mode). */
const RETRY_QUOTA_CAPACITY = 500;
export const RETRY_COST = 5;
export const TRANSIENT_RETRY_COST = 10;
const NO_RETRY_INCREMENT = 1;

const COSTS: Record<RetryReason, number> = {
  transient: TRANSIENT_RETRY_COST,
  throttling: RETRY_COST,
  "server-error": RETRY_COST,
};

/**
 * The instance's retry budget (a token bucket), as the SDK's StandardRetryStrategy keeps it: a retry takes
 * its cost, a success puts back 1 or its last retry's cost; without the cost left, the call fails at once.
 */
export interface RetryQuota {
  readonly available: number;
  tryTake(cost: number): boolean;
  refund(amount: number): void;
}

export function createRetryQuota(capacity = RETRY_QUOTA_CAPACITY): RetryQuota {
  let available = capacity;
  return {
    get available() {
      return available;
    },
    tryTake(cost) {
      if (available < cost) return false;
      available -= cost;
      return true;
    },
    refund(amount) {
      available = Math.min(capacity, available + amount);
    },
  };
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
  /** Shared by every call of one instance; none: only the attempts and the deadline bound. */
  quota?: RetryQuota;
  /** What is thrown when the retries run out; the RetriesExhaustedError itself when not given. */
  giveUp?: (exhausted: RetriesExhaustedError) => unknown;
  clock?: Clock;
  /** In [0, 1), as Math.random (the default): the jitter. */
  random?: () => number;
}

const NO_LIMIT = Number.POSITIVE_INFINITY;

/**
 * Runs `attempt` until it succeeds, fails with a failure `classify` refuses, or a limit is reached: the
 * attempts, the deadline (an attempt is made only with a whole millisecond left to wait for its answer, a
 * wait that would end past it is not waited for), or the quota. Each attempt gets a signal that aborts at
 * its own timeout, never later than the deadline.
 */
export async function withRetries<T>(
  options: RetryOptions,
  attempt: (signal: AbortSignal) => Promise<T>,
): Promise<T> {
  const { policy, classify, quota, clock = systemClock, random = Math.random } = options;
  const deadlineAt = policy.deadlineMs === undefined ? NO_LIMIT : clock.now() + policy.deadlineMs;
  let lastFailure: { error: unknown } | undefined;
  const giveUp = (attempts: number, why: GiveUpReason) => {
    const exhausted = new RetriesExhaustedError(attempts, why, lastFailure && { cause: lastFailure.error });
    return options.giveUp ? options.giveUp(exhausted) : exhausted;
  };
  let lastRetryCost: number | undefined;
  for (let attemptNumber = 1; ; attemptNumber++) {
    const leftMs = Math.floor(deadlineAt - clock.now());
    if (leftMs < 1) throw giveUp(attemptNumber - 1, "deadline reached");
    let result: T;
    try {
      result = await limitedAttempt(attempt, Math.min(policy.attemptTimeoutMs ?? NO_LIMIT, leftMs), clock);
    } catch (error) {
      const reason = classify(error);
      if (reason === undefined) throw error;
      lastFailure = { error };
      if (attemptNumber >= policy.maxAttempts) throw giveUp(attemptNumber, "attempts exhausted");
      const delayMs = random() * Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (attemptNumber - 1));
      if (clock.now() + delayMs >= deadlineAt) throw giveUp(attemptNumber, "deadline reached");
      const cost = COSTS[reason];
      if (quota && !quota.tryTake(cost)) throw giveUp(attemptNumber, "retry quota spent");
      lastRetryCost = cost;
      await clock.sleep(delayMs);
      continue;
    }
    quota?.refund(lastRetryCost ?? NO_RETRY_INCREMENT);
    return result;
  }
}

/** One attempt, its signal aborted after `timeoutMs` (its own timeout, or the deadline's nearer one). */
async function limitedAttempt<T>(
  attempt: (signal: AbortSignal) => Promise<T>,
  timeoutMs: number,
  clock: Clock,
): Promise<T> {
  if (timeoutMs === NO_LIMIT) return attempt(new AbortController().signal);
  const timeout = timeoutSignal(clock, timeoutMs);
  try {
    return await attempt(timeout.signal);
  } finally {
    timeout.cancel();
  }
}
