import { type Clock, systemClock, timeoutSignal } from "../clock.ts";
import { DEFAULT_STORE_MAX_ATTEMPTS } from "../defaults.ts";
import { StoreUnavailableError } from "../errors.ts";
import { type RetryOptions, RetryQuota, withRetries } from "../retry/standard-retry.ts";
import { createDynamoDbClient, type DynamoDbClientSettings } from "./dynamodb-client.ts";
import { retryableFault } from "./dynamodb-faults.ts";
import type { PlantStore } from "./plant-store.ts";
import { putIfAbsent, StoredItemNotReturnedError } from "./put-if-absent.ts";

/** The bench sends this PutItem raw (bench/local-load.ts). */
export { putIfAbsentInput } from "./put-if-absent.ts";

export interface DynamoDbSettings extends DynamoDbClientSettings {
  tableName: string;
  deadlineMs: number;
  attemptTimeoutMs: number;
  /** Calls to DynamoDB per create, the first included; DEFAULT_STORE_MAX_ATTEMPTS when not given. */
  maxAttempts?: number;
  /** The time the retries and the prewarm read; the system clock when not given. */
  clock?: Clock;
  /** The retries' jitter, in [0, 1); Math.random when not given. */
  random?: () => number;
}

/** The DynamoDB store, and a way to open its connection before the first request needs it. */
export interface DynamoDbPlantStore extends PlantStore {
  /**
   * Opens the connection to DynamoDB without a request, giving up at `signal` (by default after one
   * attempt's timeout); never rejects (see DynamoDbClient.prewarm).
   */
  prewarm(signal?: AbortSignal): Promise<void>;
}

export const STORE_RETRY_AFTER_SECONDS = 1;

/**
 * Backoff between attempts: full jitter over 25 ms × 2ⁿ. The cap is the SDKs' 20 s, but it never binds:
 * with 3 attempts the longest wait is under 50 ms, and the deadline bounds every wait anyway. The base is
 * below the SDK's (100 ms, 500 ms for throttling) because the whole budget is the API's few seconds.
 */
const BASE_DELAY_MS = 25;
const MAX_DELAY_MS = 20_000;

/**
 * The PlantStore on DynamoDB's JSON protocol (lambda/store/dynamodb-client.ts): each create is the
 * put-and-replay rule (put-if-absent.ts), one call to DynamoDB per attempt of the standard retries
 * (lambda/retry/standard-retry.ts), over the failures dynamodb-faults.ts classifies; when they give up,
 * a 503 saying what is known of the write.
 */
export function createDynamoDbPlantStore(settings: DynamoDbSettings): DynamoDbPlantStore {
  const client = createDynamoDbClient(settings);
  const clock = settings.clock ?? systemClock;
  const retries: Omit<RetryOptions, "giveUp"> = {
    policy: {
      maxAttempts: settings.maxAttempts ?? DEFAULT_STORE_MAX_ATTEMPTS,
      deadlineMs: settings.deadlineMs,
      attemptTimeoutMs: settings.attemptTimeoutMs,
      baseDelayMs: BASE_DELAY_MS,
      maxDelayMs: MAX_DELAY_MS,
    },
    classify: (error) => (error instanceof StoredItemNotReturnedError ? "follow-up" : retryableFault(error)),
    /** Shared by every request of this instance, as the SDK client's quota is. */
    quota: new RetryQuota(),
    clock,
    ...(settings.random ? { random: settings.random } : {}),
  };

  return {
    putIfAbsent(plant, counter) {
      const create = putIfAbsent(client, settings.tableName, plant);
      return withRetries(
        {
          ...retries,
          giveUp: (exhausted) =>
            new StoreUnavailableError(create.outcome(), STORE_RETRY_AFTER_SECONDS, { cause: exhausted }),
        },
        (signal) => {
          if (counter) counter.storeAttempts++;
          return create.call(signal);
        },
      );
    },
    async prewarm(signal) {
      if (signal) return client.prewarm(signal);
      const timeout = timeoutSignal(clock, settings.attemptTimeoutMs);
      try {
        await client.prewarm(timeout.signal);
      } finally {
        timeout.cancel();
      }
    },
  };
}
