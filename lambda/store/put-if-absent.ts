/**
 * The put-and-replay rule on DynamoDB: a create is a conditional PutItem that never overwrites, and when
 * the condition fails the stored plant is what the caller compares its own with. DynamoDB's API makes the
 * stored item of a ConditionalCheckFailedException optional: it is returned as the request's
 * ReturnValuesOnConditionCheckFailure asks, and may be absent (an endpoint that does not honour the
 * option). When it is absent, the next call reads the item, consistently.
 */
import type { WriteOutcome } from "../errors.ts";
import type { NewPlant } from "../plants/plant.ts";
import { type DynamoDbClient, DynamoDbError, TransientDynamoDbError } from "./dynamodb-client.ts";
import { mayHaveApplied } from "./dynamodb-faults.ts";
import { fromItem, type Item, toItem } from "./plant-item.ts";
import type { PutOutcome } from "./plant-store.ts";

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

/** The write's condition failed without the stored item: the next call reads it (a retry's follow-up). */
export class StoredItemNotReturnedError extends Error {
  override name = "StoredItemNotReturnedError";
}

/** One create's calls, made one at a time, and what they learnt of the write. */
export interface PutIfAbsent {
  /** The next call; StoredItemNotReturnedError when a conflict needs the read. */
  call(signal: AbortSignal): Promise<PutOutcome>;
  /** What is known of the write if the create gives up now. */
  outcome(): WriteOutcome;
}

/**
 * One create, a call at a time (each an attempt of the caller's retries): the PutItem, or the read of the
 * stored plant after a conflict that came without it. It learns, across its calls, whether a PutItem may
 * have applied unconfirmed (sent again after a stale connection; no answer after it was sent; a 5xx),
 * which decides the outcome of a failure and tells a replay of this create's own write from another's.
 */
export function putIfAbsent(client: DynamoDbClient, tableName: string, plant: NewPlant): PutIfAbsent {
  let mayHaveWritten = false;
  let readNext = false;
  const existing = (item: Item): PutOutcome => ({
    created: false,
    existing: fromItem(item),
    ...(mayHaveWritten ? { afterUnconfirmedWrite: true } : {}),
  });

  const put = async (signal: AbortSignal): Promise<PutOutcome> => {
    try {
      // A PutItem sent again after a stale connection: the first may have reached DynamoDB.
      await client.call("PutItem", putIfAbsentInput(tableName, plant), signal, () => {
        mayHaveWritten = true;
      });
      return { created: true };
    } catch (error) {
      if (!(error instanceof DynamoDbError && error.type === CONDITION_FAILED)) {
        mayHaveWritten ||= mayHaveApplied(error);
        throw error;
      }
      const stored = error.body.Item as Item | undefined;
      if (stored) return existing(stored);
      readNext = true;
      throw new StoredItemNotReturnedError("the write's condition failed without the stored item", {
        cause: error,
      });
    }
  };

  const readStored = async (signal: AbortSignal): Promise<PutOutcome> => {
    const read = await client.call(
      "GetItem",
      { TableName: tableName, Key: { id: { N: plant.id.toString() } }, ConsistentRead: true },
      signal,
    );
    readNext = false;
    if (read.Item === undefined) {
      // The conflict's item is gone (deleted since): the next call writes again.
      throw new TransientDynamoDbError("the existing plant vanished between the write and the read");
    }
    return existing(read.Item as Item);
  };

  return {
    call: (signal) => (readNext ? readStored(signal) : put(signal)),
    outcome: () => (mayHaveWritten ? "unknown" : "not-written"),
  };
}
