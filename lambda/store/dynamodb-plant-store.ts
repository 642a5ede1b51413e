import { type Clock, systemClock, timeoutSignal } from "../clock.ts";
import { DEFAULT_STORE_MAX_ATTEMPTS } from "../defaults.ts";
import { ApiError, storeUnavailable } from "../errors.ts";
import type { NewPlant } from "../plants/plant.ts";
import { createRetryQuota, type RetryOptions, withRetries } from "../retry/standard-retry.ts";
import {
  createDynamoDbClient,
  type DynamoDbClientSettings,
  DynamoDbError,
  TransientDynamoDbError,
} from "./dynamodb-client.ts";
import { mayHaveApplied, retryableFault } from "./dynamodb-faults.ts";
import { fromItem, type Item, toItem } from "./plant-item.ts";

export interface DynamoDbSettings extends DynamoDbClientSettings {
  tableName: string;
  deadlineMs: number;
  attemptTimeoutMs: number;
  /** Attempts per create, the first included; DEFAULT_STORE_MAX_ATTEMPTS when not given. */
  maxAttempts?: number;
  /** The time the retries and the prewarm read; the system clock when not given. */
  clock?: Clock;
  /** The retries' jitter, in [0, 1); Math.random when not given. */
  random?: () => number;
}

/**
 * What a store did with a put. `calls`: the requests it sent the store, failed ones included (the
 * StoreAttempts metric). `afterUnconfirmedWrite`: an earlier attempt of this put may have written (no
 * answer came), so an existing plant of the same content is most likely that write, not another request's.
 */
export type PutOutcome =
  | { created: true; calls: number }
  | { created: false; existing: NewPlant; afterUnconfirmedWrite: boolean; calls: number };

/**
 * A store's failure no retry could help (refused for good, a stored item that is not a plant, a bug): a
 * 500 like any bug, which still carries the calls the store made, for the StoreAttempts metric.
 */
export class StoreFailedError extends Error {
  override name = "StoreFailedError";
  constructor(
    readonly storeCalls: number,
    cause: unknown,
  ) {
    super("the plant store failed", { cause });
  }
}

/**
 * Where plants are kept, the port the operations use: the DynamoDB store's methods, so that a method
 * added below is one of the port's; all but prewarm, which only the function's init calls. A put never
 * overwrites: an existing id is reported with what it holds. A store that gives up throws the
 * StoreUnavailable ApiError carrying its calls; one that fails otherwise, a StoreFailedError.
 */
export type PlantStore = Omit<ReturnType<typeof createDynamoDbPlantStore>, "prewarm">;

export const STORE_RETRY_AFTER_SECONDS = 1;

/**
 * Backoff between attempts: full jitter over 25 ms × 2ⁿ. The cap is the SDKs' 20 s, but it never binds:
 * with 3 attempts the longest wait is under 50 ms, and the deadline bounds every wait anyway. The base is
 * below the SDK's (100 ms, 500 ms for throttling) because the whole budget is the API's few seconds.
 */
const BASE_DELAY_MS = 25;
const MAX_DELAY_MS = 20_000;

const CONDITION_FAILED = "ConditionalCheckFailedException";

/** The conditional PutItem of a plant: it never overwrites, and a conflict returns what is stored. */
export function putIfAbsentInput(tableName: string, plant: NewPlant): object {
  return {
    TableName: tableName,
    Item: toItem(plant),
    ConditionExpression: "attribute_not_exists(id)",
    ReturnValuesOnConditionCheckFailure: "ALL_OLD",
  };
}

/**
 * The PlantStore on DynamoDB's JSON protocol (dynamodb-client.ts). Each attempt of the standard retries
 * (lambda/retry/standard-retry.ts) is the conditional PutItem and, when its condition fails, the stored
 * plant: from the failure's `ALL_OLD`, or one consistent GetItem where the endpoint does not return it.
 * Once a put has met an existing plant, later attempts only read it. Across attempts the store learns
 * whether a PutItem may have applied unconfirmed (no answer after it was sent, a reset kept connection
 * included; a 5xx): that decides the 503's message when the retries give up, and tells a replay of this
 * create's own write from another request's.
 */
export function createDynamoDbPlantStore(settings: DynamoDbSettings) {
  const client = createDynamoDbClient(settings);
  const { tableName } = settings;
  const clock = settings.clock ?? systemClock;
  const retries: Omit<RetryOptions, "giveUp"> = {
    policy: {
      maxAttempts: settings.maxAttempts ?? DEFAULT_STORE_MAX_ATTEMPTS,
      deadlineMs: settings.deadlineMs,
      attemptTimeoutMs: settings.attemptTimeoutMs,
      baseDelayMs: BASE_DELAY_MS,
      maxDelayMs: MAX_DELAY_MS,
    },
    classify: retryableFault,
    /** Shared by every request of this instance, as the SDK client's quota is. */
    quota: createRetryQuota(),
    clock,
    random: settings.random ?? Math.random,
  };

  return {
    async putIfAbsent(plant: NewPlant): Promise<PutOutcome> {
      let calls = 0;
      let mayHaveWritten = false;
      let metExisting = false;

      /** The PutItem: true when it created the plant; the stored item when the id was taken and it came. */
      const put = async (signal: AbortSignal): Promise<true | Item | undefined> => {
        calls++;
        try {
          await client.call("PutItem", putIfAbsentInput(tableName, plant), signal);
          return true;
        } catch (error) {
          if (!(error instanceof DynamoDbError && error.type === CONDITION_FAILED)) {
            mayHaveWritten ||= mayHaveApplied(error);
            throw error;
          }
          metExisting = true;
          return error.body.Item as Item | undefined;
        }
      };
      const readStored = async (signal: AbortSignal): Promise<Item> => {
        calls++;
        const key = { id: { N: plant.id.toString() } };
        const read = await client.call(
          "GetItem",
          { TableName: tableName, Key: key, ConsistentRead: true },
          signal,
        );
        if (read.Item !== undefined) return read.Item as Item;
        // The existing plant is gone (deleted since): the next attempt writes again.
        metExisting = false;
        throw new TransientDynamoDbError("the existing plant vanished between the write and the read");
      };
      const attempt = async (signal: AbortSignal): Promise<PutOutcome> => {
        const written = metExisting ? undefined : await put(signal);
        if (written === true) return { created: true, calls };
        const stored = written ?? (await readStored(signal));
        return { created: false, existing: fromItem(stored), afterUnconfirmedWrite: mayHaveWritten, calls };
      };

      const giveUp = (exhausted: Error) => {
        const outcome = mayHaveWritten ? "unknown" : "not-written";
        const unavailable = storeUnavailable(outcome, STORE_RETRY_AFTER_SECONDS, {
          cause: exhausted,
        });
        unavailable.storeCalls = calls;
        return unavailable;
      };
      return withRetries({ ...retries, giveUp }, attempt).catch((error: unknown) => {
        throw error instanceof ApiError ? error : new StoreFailedError(calls, error);
      });
    },
    /**
     * Opens the connection to DynamoDB without a request, giving up at `signal` (by default after one
     * attempt's timeout); never rejects (see DynamoDbClient.prewarm).
     */
    async prewarm(signal?: AbortSignal): Promise<void> {
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
