/**
 * Retries safe by design: a create is idempotent (an identical replay answers 200) and a token request
 * changes nothing, so a failure that may be passing (429, 502, 503, 504, no answer, a timeout, even after
 * the request was sent) is tried again, in the shape of the AWS SDKs' standard mode: few attempts,
 * full-jitter backoff or the server's longer Retry-After (capped), all inside one deadline, each attempt
 * with its own timeout, and a retry quota per client: in an outage its calls soon stop retrying and fail
 * at once, instead of tripling the load on a struggling service. A redirect, a refusal and a 500 are not
 * retried: sending again would get the same answer.
 */
import { type Clock, sleep } from "./clock.ts";
import { PlantStoreError } from "./errors.ts";

export interface RetryOptions {
  /**
   * Requests per call, the first included (default 3). For createPlant these are POSTs, the one sent
   * again with a new token after the API refused a token among them; the token endpoint's requests
   * have the same limit of their own, within the same deadline.
   */
  maxAttempts?: number | undefined;
  /** Time for the whole call, waits and token requests included (default 10 s). */
  deadlineMs?: number | undefined;
  /** Time one request may take before it is abandoned and, if time is left, sent again (default 5 s). */
  attemptTimeoutMs?: number | undefined;
  /** The first backoff's ceiling; it doubles per attempt (default 100 ms). */
  baseDelayMs?: number | undefined;
  /** The backoff's largest ceiling (default 2 s). */
  maxDelayMs?: number | undefined;
  /** The longest Retry-After honoured; a longer one is waited this long (default 5 s). */
  maxRetryAfterMs?: number | undefined;
}

/** @internal */
export type RetryPolicy = Record<keyof RetryOptions, number>;

export const DEFAULT_RETRY_POLICY: Readonly<Record<keyof RetryOptions, number>> = {
  maxAttempts: 3,
  deadlineMs: 10_000,
  attemptTimeoutMs: 5_000,
  baseDelayMs: 100,
  maxDelayMs: 2_000,
  maxRetryAfterMs: 5_000,
};

/** The statuses worth another attempt: throttled, or the service or its gateway passing out. */
export const RETRYABLE_STATUSES: ReadonlySet<number> = new Set([429, 502, 503, 504]);

/** The longest wait a timer keeps (2^31 − 1 ms, 24.8 days): Node and browsers fire a longer one at once. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * A TypeError for a name of `given` that `known` lacks: a misspelt one (retries, retry.maxAttempt) would
 * otherwise be dropped, its setting silently the default. @internal
 */
export function refuseUnknownNames(given: object, known: string[], what: string, prefix = ""): void {
  const unknown = Object.keys(given).find((key) => !known.includes(key));
  if (unknown === undefined) return;
  const name = `${prefix}${unknown.slice(0, 64)}`;
  throw new TypeError(`unknown option '${name}': ${what} takes only ${known.join(", ")}`);
}

/** @internal */
export function retryPolicyFrom(options: RetryOptions = {}): RetryPolicy {
  if (typeof options !== "object" || options === null || Array.isArray(options)) {
    throw new TypeError(`retry must be an object such as { maxAttempts: 3 }, got ${JSON.stringify(options)}`);
  }
  refuseUnknownNames(options, Object.keys(DEFAULT_RETRY_POLICY), "retry", "retry.");
  const policy = { ...DEFAULT_RETRY_POLICY };
  for (const [key, value] of Object.entries(options) as [keyof RetryPolicy, number | undefined][]) {
    if (value === undefined) continue;
    // No time at all for an attempt or a call would fail every call before it is sent.
    const least = key === "attemptTimeoutMs" || key === "deadlineMs" ? 1 : 0;
    const valid =
      key === "maxAttempts"
        ? Number.isInteger(value) && value >= 1
        : Number.isFinite(value) && value >= least && value <= MAX_TIMER_MS;
    if (!valid) {
      const rule =
        key === "maxAttempts" ? "whole number ≥ 1" : `number of ms from ${least} to ${MAX_TIMER_MS}`;
      throw new TypeError(`retry.${key} must be a ${rule}, got ${value}`);
    }
    policy[key] = value;
  }
  return policy;
}

/** The SDKs' quota numbers (standard mode): a retry after a throttle costs 5, after a fault 10. */
const RETRY_QUOTA_CAPACITY = 500;
const THROTTLED_RETRY_COST = 5;
const FAULT_RETRY_COST = 10;
const NO_RETRY_REFUND = 1;

/**
 * A client's retry budget (a token bucket). Each retry takes its cost out; a call that succeeds without
 * retrying puts 1 back, one that succeeds after retries the cost of its last; never above the capacity.
 * @internal
 */
export class RetryQuota {
  available = RETRY_QUOTA_CAPACITY;

  tryTake(cost: number): boolean {
    if (this.available < cost) return false;
    this.available -= cost;
    return true;
  }

  refund(amount: number): void {
    this.available = Math.min(RETRY_QUOTA_CAPACITY, this.available + amount);
  }
}

/**
 * A failure worth another attempt: what the caller hears if it is the last. The next attempt waits the
 * backoff, or the server's Retry-After (`retryAfterMs`) when longer; or, when the API refused the token
 * itself, goes at once once `getNewToken` has fetched another (no fault of the service: no wait, no
 * quota). @internal
 */
export class RetryableFailure {
  constructor(
    readonly failure: PlantStoreError,
    readonly retryAfterMs?: number | undefined,
    readonly getNewToken?: () => Promise<void>,
  ) {}
}

/** @internal */
export interface RetryContext {
  policy: RetryPolicy;
  clock: Clock;
  /** In [0, 1), as Math.random. */
  random: () => number;
  /** Shared by every call of one client; a retry whose cost it cannot pay is not made. */
  quota: RetryQuota;
  /** The call's own signal (AbortSignal.any of the client's and the call's): it stops at once, never retried. */
  signal: AbortSignal;
  /** When the call must be over (clock time). */
  deadlineAt: number;
  /** What is being called, for the timeout message (e.g. "POST http://…/plants"). */
  what: string;
}

/**
 * Runs `attempt` until it gives its value, throws anything but a RetryableFailure, or the attempts, the
 * deadline or the quota run out; then throws the last failure, which says how many requests were sent.
 * `attempt` gets a signal that aborts when its own timeout (or the deadline) passes or the call's signal
 * aborts; whatever it throws once its timeout has passed is a retryable timeout. @internal
 */
export async function requestWithRetries<T>(
  context: RetryContext,
  attempt: (signal: AbortSignal) => Promise<T>,
): Promise<T> {
  const { policy, clock, random, quota, signal, deadlineAt, what } = context;
  let lastFailure: PlantStoreError | undefined;
  let lastRetryCost = NO_RETRY_REFUND;
  let retriesWaited = 0;
  for (let attempts = 1; ; attempts++) {
    signal.throwIfAborted();
    const leftMs = Math.floor(deadlineAt - clock.now());
    if (leftMs < 1) {
      throw (
        lastFailure ??
        new PlantStoreError(`${what}: not sent, the call's deadline of ${policy.deadlineMs} ms had passed`, {
          kind: "timeout",
          attempts: 0,
        })
      );
    }
    let result: T;
    try {
      result = await limitedAttempt(context, Math.min(policy.attemptTimeoutMs, leftMs), attempt);
    } catch (thrown) {
      if (signal.aborted) throw signal.reason;
      const failure = thrown instanceof RetryableFailure ? thrown.failure : thrown;
      if (failure instanceof PlantStoreError) (failure as { attempts: number }).attempts = attempts;
      if (!(thrown instanceof RetryableFailure)) throw thrown;
      lastFailure = thrown.failure;
      if (attempts >= policy.maxAttempts) throw lastFailure;
      if (thrown.getNewToken) {
        await thrown.getNewToken();
        continue;
      }
      // As the AWS SDKs' standard mode: the server's Retry-After (capped) when it asks for longer than the
      // jittered backoff, never less (a Retry-After of 0, or a date already past, is no burst of retries).
      const backoffMs = random() * Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** retriesWaited);
      const delayMs = Math.max(backoffMs, Math.min(thrown.retryAfterMs ?? 0, policy.maxRetryAfterMs));
      if (clock.now() + delayMs >= deadlineAt) throw lastFailure;
      const cost = lastFailure.kind === "throttled" ? THROTTLED_RETRY_COST : FAULT_RETRY_COST;
      if (!quota.tryTake(cost)) throw lastFailure;
      lastRetryCost = cost;
      retriesWaited++;
      await sleep(clock, delayMs, signal);
      continue;
    }
    // The caller gave up while the attempt succeeded: it hears its abort, as it would a moment later.
    signal.throwIfAborted();
    quota.refund(lastRetryCost);
    return result;
  }
}

/**
 * One attempt, its signal aborted at `timeoutMs` or with the call's signal; what it throws once its own
 * timeout passed is that timeout, a RetryableFailure.
 */
async function limitedAttempt<T>(
  { clock, signal, what }: RetryContext,
  timeoutMs: number,
  attempt: (signal: AbortSignal) => Promise<T>,
): Promise<T> {
  const timeout = new AbortController();
  const reason = new DOMException(`no answer within ${timeoutMs} ms`, "TimeoutError");
  const cancelTimer = clock.setTimer(() => timeout.abort(reason), timeoutMs);
  try {
    return await attempt(AbortSignal.any([signal, timeout.signal]));
  } catch (error) {
    if (!signal.aborted && timeout.signal.aborted) {
      throw new RetryableFailure(new PlantStoreError(`${what}: ${reason.message}`, { kind: "timeout" }));
    }
    throw error;
  } finally {
    cancelTimer();
  }
}
