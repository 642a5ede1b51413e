export interface RetryPolicy {
  /** Time budget for all attempts together, from the first attempt's start. */
  deadlineMs: number;
  /** Time one attempt may take before it is abandoned. */
  attemptTimeoutMs: number;
  baseDelayMs: number;
  maxDelayMs: number;
}

export class RetriesExhaustedError extends Error {}

/**
 * Runs `attempt` until it succeeds, fails with an error `isRetryable` refuses, or the deadline comes.
 * Each attempt gets an AbortSignal that fires at its own timeout; between attempts the wait is a
 * capped exponential backoff with full jitter, so throttled callers do not retry in lockstep.
 */
export async function withRetries<T>(
  policy: RetryPolicy,
  isRetryable: (error: unknown) => boolean,
  attempt: (signal: AbortSignal) => Promise<T>,
): Promise<T> {
  const deadline = Date.now() + policy.deadlineMs;
  for (let attemptNumber = 0; ; attemptNumber++) {
    const remaining = deadline - Date.now();
    try {
      return await attempt(AbortSignal.timeout(Math.max(1, Math.min(policy.attemptTimeoutMs, remaining))));
    } catch (error) {
      if (!isRetryable(error)) throw error;
      const backoff = Math.random() * Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** attemptNumber);
      if (Date.now() + backoff >= deadline) {
        throw new RetriesExhaustedError(`gave up after ${attemptNumber + 1} attempts`, { cause: error });
      }
      await new Promise((resolve) => setTimeout(resolve, backoff));
    }
  }
}
