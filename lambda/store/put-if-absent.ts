/**
 * The put-and-replay rule on DynamoDB: a create is a conditional PutItem that never overwrites, and when
 * the condition fails the stored plant is what the caller compares its own with. DynamoDB's API makes the
 * stored item of a ConditionalCheckFailedException optional: it is returned as ReturnValuesOnConditionCheckFailure
 * asks, and may be absent (an endpoint that does not honour the option). When it is absent, the next call
 * reads the item, consistently.
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

/**
 * One create, a call at a time (each an attempt of the caller's retries): the PutItem, or the read of the
 * stored plant after a conflict that came without it. It learns, across its calls, whether a PutItem may
 * have applied unconfirmed (sent again after a stale connection; no answer after it was sent; a 5xx),
 * which decides the outcome of a failure and tells a replay of this create's own write from another's.
 */
export class PutIfAbsent {
  #mayHaveWritten = false;
  #readNext = false;

  constructor(
    readonly client: DynamoDbClient,
    readonly tableName: string,
    readonly plant: NewPlant,
  ) {}

  /** What is known of the write if the create gives up now. */
  get outcome(): WriteOutcome {
    return this.#mayHaveWritten ? "unknown" : "not-written";
  }

  /** The next call; StoredItemNotReturnedError when a conflict needs the read. */
  async call(signal: AbortSignal): Promise<PutOutcome> {
    return this.#readNext ? this.#readStored(signal) : this.#put(signal);
  }

  async #put(signal: AbortSignal): Promise<PutOutcome> {
    try {
      // A PutItem sent again after a stale connection: the first may have reached DynamoDB.
      await this.client.call("PutItem", putIfAbsentInput(this.tableName, this.plant), signal, () => {
        this.#mayHaveWritten = true;
      });
      return { created: true };
    } catch (error) {
      if (!(error instanceof DynamoDbError && error.type === CONDITION_FAILED)) {
        this.#mayHaveWritten ||= mayHaveApplied(error);
        throw error;
      }
      const stored = error.body.Item as Item | undefined;
      if (stored) return this.#existing(stored);
      this.#readNext = true;
      throw new StoredItemNotReturnedError("the write's condition failed without the stored item", {
        cause: error,
      });
    }
  }

  async #readStored(signal: AbortSignal): Promise<PutOutcome> {
    const read = await this.client.call(
      "GetItem",
      { TableName: this.tableName, Key: { id: { N: this.plant.id.toString() } }, ConsistentRead: true },
      signal,
    );
    this.#readNext = false;
    if (read.Item === undefined) {
      // The conflict's item is gone (deleted since): the next call writes again.
      throw new TransientDynamoDbError("the existing plant vanished between the write and the read");
    }
    return this.#existing(read.Item as Item);
  }

  #existing(item: Item): PutOutcome {
    return {
      created: false,
      existing: fromItem(item),
      ...(this.#mayHaveWritten ? { afterUnconfirmedWrite: true } : {}),
    };
  }
}
