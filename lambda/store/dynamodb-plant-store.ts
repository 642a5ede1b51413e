import { DEFAULT_STORE_MAX_ATTEMPTS } from "../defaults.ts";
import { StoreUnavailableError, type WriteOutcome } from "../errors.ts";
import type { NewPlant } from "../plants/plant.ts";
import {
  createDynamoDbClient,
  type DynamoDbClient,
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
  /**
   * Opens the connection to DynamoDB without a request, giving up at `signal` (by default after one
   * attempt's timeout); never rejects (see DynamoDbClient.prewarm).
   */
  prewarm(signal?: AbortSignal): Promise<void>;
}

/** DynamoDB's throttling error types: retried, and flagged `throttle` in a trace (lambda/tracing/). */
export const THROTTLING_TYPES = new Set([
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
  const retryOptions = {
    policy,
    /** Shared by every request of this instance, as the SDK client's quota is. */
    quota: new RetryQuota(),
    classify: retryableFault,
    ...(settings.retryEnvironment ? { environment: settings.retryEnvironment } : {}),
  };

  return {
    async putIfAbsent(plant, observer) {
      const create = createAttempts(
        countedCalls(client, policy.maxAttempts, observer),
        settings.tableName,
        plant,
      );
      try {
        return await withRetries(retryOptions, create.attempt);
      } catch (error) {
        if (!(error instanceof RetriesExhaustedError)) throw error;
        throw new StoreUnavailableError(create.outcome(), STORE_RETRY_AFTER_SECONDS, { cause: error });
      }
    },
    prewarm: (signal = AbortSignal.timeout(settings.attemptTimeoutMs)) => client.prewarm(signal),
  };
}

/**
 * The attempts of one create over its counted `call`s, and what they learn: a read after a conflict that
 * fails is retried alone; and whether a PutItem may have applied unconfirmed (no answer after it was
 * sent, a 5xx) decides the outcome of a failure.
 */
function createAttempts(
  call: DynamoDbClient["call"],
  tableName: string,
  plant: NewPlant,
): { attempt: (signal: AbortSignal) => Promise<PutOutcome>; outcome: () => WriteOutcome } {
  let mayHaveWritten = false;
  /** A conditional failure came without the stored plant: the next call reads it. */
  let readNext = false;
  const existingOutcome = (item: Item): PutOutcome => ({
    created: false,
    existing: fromItem(item),
    ...(mayHaveWritten ? { afterUnconfirmedWrite: true } : {}),
  });

  const attempt = async (signal: AbortSignal): Promise<PutOutcome> => {
    if (!readNext) {
      try {
        // A PutItem sent again after a stale connection: the first may have reached DynamoDB.
        await call("PutItem", putIfAbsentInput(tableName, plant), signal, () => {
          mayHaveWritten = true;
        });
        return { created: true };
      } catch (error) {
        if (!(error instanceof DynamoDbError && error.type === CONDITION_FAILED)) {
          mayHaveWritten ||= mayHaveApplied(error);
          throw error;
        }
        // DynamoDB returns the old item; servers that ignore the option (dynalite) need a read.
        const oldItem = error.body.Item as Item | undefined;
        if (oldItem) return existingOutcome(oldItem);
        readNext = true;
      }
    }
    const read = await call(
      "GetItem",
      { TableName: tableName, Key: { id: { N: plant.id.toString() } }, ConsistentRead: true },
      signal,
    );
    readNext = false;
    if (read.Item === undefined) {
      throw new TransientDynamoDbError("the existing plant vanished between the write and the read");
    }
    return existingOutcome(read.Item as Item);
  };
  return { attempt, outcome: () => (mayHaveWritten ? "unknown" : "not-written") };
}

/**
 * The calls to DynamoDB of one create: each (the read after a conflict included) is one of its
 * `maxAttempts`, counted for the observer; a call past them throws RetriesExhaustedError, caused by the
 * last call's failure.
 */
function countedCalls(
  client: DynamoDbClient,
  maxAttempts: number,
  observer: StoreObserver | undefined,
): DynamoDbClient["call"] {
  let calls = 0;
  let lastFailure: unknown;
  return (operation, input, signal, onResend) => {
    if (calls >= maxAttempts) {
      throw new RetriesExhaustedError(`gave up after ${calls} calls: attempts exhausted`, {
        cause: lastFailure,
      });
    }
    calls++;
    if (observer) observer.storeAttempts++;
    return client.call(operation, input, signal, onResend).catch((error: unknown) => {
      lastFailure = error;
      throw error;
    });
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

/** Whether a PutItem that failed so may still have written: it reached DynamoDB and got no answer, or a 5xx. */
function mayHaveApplied(error: unknown): boolean {
  if (error instanceof TransientDynamoDbError) return error.requestSent;
  return error instanceof DynamoDbError && error.status >= 500;
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
