import { describe, expect, it } from "vitest";
import { RetriesExhaustedError, withRetries } from "../../lambda/store/retry.ts";

const policy = { deadlineMs: 300, attemptTimeoutMs: 100, baseDelayMs: 5, maxDelayMs: 20 };
const retryable = (error: unknown) => error instanceof Error && error.message === "transient";

describe("withRetries", () => {
  it("retries transient failures until an attempt succeeds", async () => {
    let attempts = 0;
    const result = await withRetries(policy, retryable, async () => {
      attempts++;
      if (attempts < 3) throw new Error("transient");
      return "done";
    });
    expect(result).toBe("done");
    expect(attempts).toBe(3);
  });

  it("does not retry other failures", async () => {
    let attempts = 0;
    await expect(
      withRetries(policy, retryable, async () => {
        attempts++;
        throw new Error("permanent");
      }),
    ).rejects.toThrow("permanent");
    expect(attempts).toBe(1);
  });

  it("gives up at the deadline with the last failure as the cause", async () => {
    const startedAt = Date.now();
    const failure = await withRetries(policy, retryable, async () => {
      throw new Error("transient");
    }).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(RetriesExhaustedError);
    expect((failure as Error).cause).toEqual(new Error("transient"));
    expect(Date.now() - startedAt).toBeLessThan(policy.deadlineMs + 1000);
  });

  it("aborts an attempt that outlives its timeout", async () => {
    const failure = await withRetries(
      policy,
      (error) => error instanceof DOMException,
      (signal) => {
        return new Promise((_, reject) => signal.addEventListener("abort", () => reject(signal.reason)));
      },
    ).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(RetriesExhaustedError);
    expect(((failure as Error).cause as DOMException).name).toBe("TimeoutError");
  });
});
