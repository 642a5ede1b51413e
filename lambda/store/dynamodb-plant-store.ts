import { DEFAULT_STORE_MAX_ATTEMPTS } from "../defaults.ts";
import { StoreUnavailableError } from "../errors.ts";
import type { NewPlant } from "../plants/plant.ts";
import {
  createDynamoDbClient,
  type DynamoDbClientSettings,
  DynamoDbError,
  TransientDynamoDbError,
} from "./dynamodb-client.ts";
import { fromItem, type Item, toItem } from "./plant-item.ts";
import type { PlantStore, PutOutcome, StoreObserver } from "./plant-store.ts";
import {
  RetriesExhaustedError,
  type RetryableFault,
  type RetryEnvironment,
  type RetryPolicy,
  RetryQuota,
  withRetries,
} from "./retry.ts";

export interface DynamoDbSettings extends DynamoDbClientSettings {
  tableName: string;
  deadlineMs: number;
  attemptTimeoutMs: number;
  /** Attempts per create, the first included; DEFAULT_STORE_MAX_ATTEMPTS when not given. */
  maxAttempts?: number;
  /** Time and randomness for the retries; the real ones when not given. */
  retryEnvironment?: RetryEnvironment;
}

/** The DynamoDB store, and a way to open its connection before the first request needs it. */
export interface DynamoDbPlantStore extends PlantStore {
  /** Opens the connection to DynamoDB without a request; never rejects (see DynamoDbClient.prewarm). */
  prewarm(): Promise<void>;
}

const THROTTLING_TYPES = new Set([
  "ProvisionedThroughputExceededException",
  "ThrottlingException",
  "RequestLimitExceeded",
  "TransactionConflictException",
]);
/** The statuses the SDKs count as transient faults (they cost the retry quota more). */
const TRANSIENT_STATUSES = new Set([500, 502, 503, 504]);
const CONDITION_FAILED = "ConditionalCheckFailedException";
export const STORE_RETRY_AFTER_SECONDS = 1;

/**
 * Backoff between attempts: full jitter over 25 ms × 2ⁿ. The cap is the SDKs' 20 s, but it never binds:
 * with 3 attempts the longest wait is under 50 ms, and the deadline bounds every wait anyway. The base is
 * below the SDK's (100 ms, 500 ms for throttling) because the whole budget is the API's few seconds.
 */
const BASE_DELAY_MS = 25;
const MAX_DELAY_MS = 20_000;

/**
 * The PlantStore on DynamoDB's JSON protocol (lambda/store/dynamodb-client.ts): a conditional PutItem
 * that never overwrites, and on a conflict the stored plant for the caller to compare.
 */
export function createDynamoDbPlantStore(settings: DynamoDbSettings): DynamoDbPlantStore {
  const client = createDynamoDbClient(settings);
  const policy: RetryPolicy = {
    maxAttempts: settings.maxAttempts ?? DEFAULT_STORE_MAX_ATTEMPTS,
    deadlineMs: settings.deadlineMs,
    attemptTimeoutMs: settings.attemptTimeoutMs,
    baseDelayMs: BASE_DELAY_MS,
    maxDelayMs: MAX_DELAY_MS,
  };
  /** Shared by every request of this instance, as the SDK client's quota is. */
  const quota = new RetryQuota();

  const attemptPut = async (
    plant: NewPlant,
    signal: AbortSignal,
    observer: StoreObserver | undefined,
  ): Promise<PutOutcome> => {
    const call = (operation: string, input: object) => {
      if (observer) observer.storeAttempts++;
      return client.call(operation, input, signal);
    };
    try {
      await call("PutItem", putIfAbsentInput(settings.tableName, plant));
      return { created: true };
    } catch (error) {
      if (!(error instanceof DynamoDbError && error.type === CONDITION_FAILED)) throw error;
      // DynamoDB returns the old item; servers that ignore the option (dynalite) need a read.
      const oldItem = error.body.Item as Item | undefined;
      let existing: NewPlant | undefined;
      if (oldItem) existing = fromItem(oldItem);
      else {
        const read = await call("GetItem", {
          TableName: settings.tableName,
          Key: { id: { N: plant.id.toString() } },
          ConsistentRead: true,
        });
        existing = read.Item ? fromItem(read.Item as Item) : undefined;
      }
      if (existing === undefined) {
        throw new TransientDynamoDbError("the existing plant vanished between the write and the read");
      }
      return { created: false, existing };
    }
  };

  return {
    async putIfAbsent(plant, observer) {
      try {
        return await withRetries(
          {
            policy,
            quota,
            classify: retryableFault,
            ...(settings.retryEnvironment ? { environment: settings.retryEnvironment } : {}),
          },
          (signal) => attemptPut(plant, signal, observer),
        );
      } catch (error) {
        if (error instanceof RetriesExhaustedError) {
          throw new StoreUnavailableError(
            "the plant store is unavailable; nothing was written, retry later",
            STORE_RETRY_AFTER_SECONDS,
            { cause: error },
          );
        }
        throw error;
      }
    },
    prewarm: () => client.prewarm(settings.attemptTimeoutMs),
  };
}

/** The conditional PutItem of a plant: it never overwrites, and a conflict returns what is stored. */
export function putIfAbsentInput(tableName: string, plant: NewPlant): object {
  return {
    TableName: tableName,
    Item: toItem(plant),
    ConditionExpression: "attribute_not_exists(id)",
    ReturnValuesOnConditionCheckFailure: "ALL_OLD",
  };
}

/** Which failures are retried, and how the SDKs' standard mode classifies them. */
function retryableFault(error: unknown): RetryableFault | undefined {
  if (error instanceof TransientDynamoDbError) return "transient";
  if (!(error instanceof DynamoDbError)) return undefined;
  if (THROTTLING_TYPES.has(error.type)) return "throttling";
  if (TRANSIENT_STATUSES.has(error.status)) return "transient";
  if (error.status >= 500) return "server-error";
  return undefined;
}
