/**
 * The retry loop's own rules. What a store under faults does with it (attempts, backoff, the quota spent
 * and refilled by 200 requests): test/hardening/store-faults.test.ts.
 */
import { describe, expect, it } from "vitest";
import { systemClock } from "../../lambda/clock.ts";
import {
  createRetryQuota,
  RETRY_COSTS,
  RetriesExhaustedError,
  type RetryOptions,
  type RetryPolicy,
  withRetries,
} from "../../lambda/retry/standard-retry.ts";
import { FakeClock } from "../support/fake-clock.ts";

/** Time that passes only when the loop sleeps or an attempt says so; timeouts fire as it passes. */
function fakeTime(random = () => 0.5) {
  const clock = new FakeClock();
  return {
    environment: { clock, random },
    advance: (ms: number) => clock.advance(ms),
    now: () => clock.now(),
  };
}

const policy: RetryPolicy = {
  maxAttempts: 3,
  deadlineMs: 3000,
  attemptTimeoutMs: 1000,
  baseDelayMs: 25,
  maxDelayMs: 20_000,
};

const transient = new Error("transient");
const throttled = new Error("throttled");
const classify: RetryOptions["classify"] = (error) =>
  error === transient ? "transient" : error === throttled ? "throttling" : undefined;

/** The options of one test: a full quota, fake time, and the exhausted retries thrown as they are. */
function options({
  environment = fakeTime().environment,
  ...overrides
}: Partial<Omit<RetryOptions, "clock" | "random">> & {
  environment?: Pick<RetryOptions, "clock" | "random">;
} = {}): RetryOptions {
  return {
    policy,
    quota: createRetryQuota(),
    classify,
    giveUp: (exhausted) => exhausted,
    ...environment,
    ...overrides,
  };
}

/** An attempt that fails with `failures` in order, then succeeds; it counts its calls. */
function scripted(failures: Error[]) {
  const counter = { attempts: 0 };
  const attempt = async () => {
    const failure = failures[counter.attempts++];
    if (failure) throw failure;
    return "done";
  };
  return { counter, attempt };
}

describe("withRetries", () => {
  // Retrying until an attempt succeeds ("fails for a moment"), not retrying a refusal ("no retry can help") and
  // no sleep past the deadline (the backoff test): test/hardening/store-faults.test.ts, through the store.
  it("aborts an attempt that outlives its timeout, and the last one at the deadline", async () => {
    const time = fakeTime(() => 0);
    const timeouts: number[] = [];
    const hang = (signal: AbortSignal) => {
      const startedAt = time.now();
      return new Promise<never>((_, reject) => {
        signal.addEventListener("abort", () => {
          timeouts.push(time.now() - startedAt);
          reject(transient);
        });
        while (!signal.aborted) time.advance(1);
      });
    };
    const failure = await withRetries(
      options({ policy: { ...policy, deadlineMs: 2500 }, environment: time.environment }),
      hang,
    ).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(RetriesExhaustedError);
    expect(timeouts).toEqual([1000, 1000, 500]);
  });
});

describe("withRetries on the system clock", () => {
  it("gives an attempt a live signal when the deadline is nearer than the attempt timeout", async () => {
    const signals: AbortSignal[] = [];
    const result = await withRetries(
      options({
        policy: { ...policy, deadlineMs: 1000, attemptTimeoutMs: 1000 },
        environment: { clock: systemClock, random: Math.random },
      }),
      async (signal) => {
        signals.push(signal);
        return "done";
      },
    );
    expect(result).toBe("done");
    expect(signals[0]?.aborted).toBe(false);
  });
});

describe("the retry quota", () => {
  it("takes 5 for a retry, 10 for a retry after a transient fault", async () => {
    const quota = createRetryQuota();
    await withRetries(options({ quota }), scripted([throttled, throttled, throttled]).attempt).catch(
      () => undefined,
    );
    expect(quota.available).toBe(500 - 2 * RETRY_COSTS.throttling);
    await withRetries(options({ quota }), scripted([transient, transient, transient]).attempt).catch(
      () => undefined,
    );
    expect(quota.available).toBe(500 - 2 * RETRY_COSTS.throttling - 2 * RETRY_COSTS.transient);
  });

  it("refunds 1 for a success without retry, and the last retry's cost for one after retries, up to the capacity", async () => {
    const quota = createRetryQuota();
    await withRetries(options({ quota }), scripted([]).attempt);
    expect(quota.available).toBe(500);

    quota.available -= 100;
    await withRetries(options({ quota }), scripted([]).attempt);
    expect(quota.available).toBe(401);
    await withRetries(options({ quota }), scripted([throttled, transient]).attempt);
    expect(quota.available).toBe(
      401 - RETRY_COSTS.throttling - RETRY_COSTS.transient + RETRY_COSTS.transient,
    );
  });
});

describe("what each caller says", () => {
  it("throws what giveUp makes of the exhausted retries, the last failure as its cause", async () => {
    const { counter, attempt } = scripted(Array.from({ length: 5 }, () => transient));
    const failure = await withRetries(
      options({
        policy: { ...policy, maxAttempts: 4 },
        giveUp: (exhausted) => new Error(`mapped after ${exhausted.attempts}`, { cause: exhausted.cause }),
      }),
      attempt,
    ).catch((error: unknown) => error);
    expect((failure as Error).message).toBe("mapped after 4");
    expect((failure as Error).cause).toBe(transient);
    expect(counter.attempts).toBe(4);
  });
});
