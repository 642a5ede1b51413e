/**
 * The store's retry strategy, the AWS SDKs' standard mode: a few attempts, each with its timeout, a
 * full-jitter backoff, a retry quota per instance (in an outage it fails fast instead of multiplying the
 * load), all inside a deadline, which the SDKs' strategy lacks (docs/DESIGN.md, "Retries"). The caller
 * says which failures it retries, of what kind, and what it throws when they run out.
 */
import { type Clock, timeoutSignal } from "../clock.ts";

export interface RetryPolicy {
  /** Attempts per call, the first included (the SDKs' default is 3). */
  maxAttempts: number;
  /** The wait before retry n (from 0) is random in [0, min(maxDelayMs, baseDelayMs × 2ⁿ)). */
  baseDelayMs: number;
  maxDelayMs: number;
  /** Time for all attempts and waits together, from the first attempt's start. */
  deadlineMs: number;
  /** Time one attempt may take before its signal aborts. */
  attemptTimeoutMs: number;
}

/**
 * Why a failed attempt is followed by another, as the SDKs classify faults: `transient` (no answer:
 * timeout, reset, refused, unreadable body; or a 500/502/503/504) suggests the service is unhealthy and
 * costs the quota more than `throttling` or another `server-error`.
 */
export type RetryReason = "transient" | "throttling" | "server-error";

/** The SDKs' quota numbers (standard mode): what a retry costs, and what a success without one refunds. */
export const RETRY_COSTS: Record<RetryReason, number> = { transient: 10, throttling: 5, "server-error": 5 };
const NO_RETRY_INCREMENT = 1;

/**
 * The instance's retry budget (a token bucket), as the SDK's StandardRetryStrategy keeps it: a retry takes
 * its cost, a success puts back 1 or its last retry's cost; without the cost left, the call fails at once.
 */
export interface RetryQuota {
  readonly capacity: number;
  available: number;
}

export function createRetryQuota(capacity = 500): RetryQuota {
  return { capacity, available: capacity };
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
  /** Shared by every call of one instance. */
  quota: RetryQuota;
  /** What is thrown when the retries run out. */
  giveUp: (exhausted: RetriesExhaustedError) => unknown;
  clock: Clock;
  /** In [0, 1), as Math.random: the jitter. */
  random: () => number;
}

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
  const { policy, classify, quota, clock, random } = options;
  const deadlineAt = clock.now() + policy.deadlineMs;
  let lastFailure: unknown;
  const giveUp = (attempts: number, why: GiveUpReason) =>
    options.giveUp(new RetriesExhaustedError(attempts, why, attempts > 0 ? { cause: lastFailure } : {}));
  let lastRetryCost = NO_RETRY_INCREMENT;
  for (let attemptNumber = 1; ; attemptNumber++) {
    const leftMs = Math.floor(deadlineAt - clock.now());
    if (leftMs < 1) throw giveUp(attemptNumber - 1, "deadline reached");
    const timeout = timeoutSignal(clock, Math.min(policy.attemptTimeoutMs, leftMs));
    const outcome = await attempt(timeout.signal).then(
      (value) => ({ value }),
      (error: unknown) => ({ error }),
    );
    timeout.cancel();
    if ("value" in outcome) {
      quota.available = Math.min(quota.capacity, quota.available + lastRetryCost);
      return outcome.value;
    }
    const reason = classify(outcome.error);
    if (reason === undefined) throw outcome.error;
    lastFailure = outcome.error;
    if (attemptNumber >= policy.maxAttempts) throw giveUp(attemptNumber, "attempts exhausted");
    const delayMs = random() * Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (attemptNumber - 1));
    if (clock.now() + delayMs >= deadlineAt) throw giveUp(attemptNumber, "deadline reached");
    if (quota.available < RETRY_COSTS[reason]) throw giveUp(attemptNumber, "retry quota spent");
    lastRetryCost = RETRY_COSTS[reason];
    quota.available -= lastRetryCost;
    await clock.sleep(delayMs);
  }
}
