import { AwsV4Signer } from "aws4fetch";
import { DependencyUnavailableError } from "../errors.ts";
import type { NewPlant } from "../plants/plant.ts";
import { type OutboundResponse, sendRequest } from "../transport/http-request.ts";
import type { PlantStore, PutOutcome } from "./plant-store.ts";
import { RetriesExhaustedError, type RetryPolicy, withRetries } from "./retry.ts";

export interface DynamoDbSettings {
  tableName: string;
  region: string;
  endpoint: string;
  credentials: { accessKeyId: string; secretAccessKey: string; sessionToken: string | undefined };
  deadlineMs: number;
  attemptTimeoutMs: number;
}

type AttributeValue = { S?: string; N?: string };
type Item = Record<string, AttributeValue | undefined>;

/** A DynamoDB error answer: its `__type` says what went wrong. */
class DynamoDbError extends Error {
  constructor(
    readonly type: string,
    readonly status: number,
    readonly body: { Item?: Item; message?: string },
  ) {
    super(`DynamoDB answered ${status} ${type}${body.message ? `: ${body.message}` : ""}`);
  }
}

/** A transient fault: a timeout, a reset connection, an unreadable answer. */
class TransientStoreError extends Error {}

const RETRYABLE_TYPES = new Set([
  "ProvisionedThroughputExceededException",
  "ThrottlingException",
  "RequestLimitExceeded",
  "TransactionConflictException",
  "InternalServerError",
  "ServiceUnavailable",
]);
const CONDITION_FAILED = "ConditionalCheckFailedException";
const STORE_RETRY_AFTER_SECONDS = 1;

/**
 * The PlantStore on DynamoDB's JSON protocol: requests signed with SigV4 by aws4fetch's signer and sent
 * with node:http. A few KiB instead of the SDK's half a MiB, which keeps the cold start near an empty
 * function's.
 */
export function createDynamoDbPlantStore(settings: DynamoDbSettings): PlantStore {
  const endpoint = new URL(settings.endpoint);
  /** The signer's derived signing keys, kept across requests (they change once a day). */
  const signingKeyCache = new Map<string, ArrayBuffer>();
  const policy: RetryPolicy = {
    deadlineMs: settings.deadlineMs,
    attemptTimeoutMs: settings.attemptTimeoutMs,
    baseDelayMs: 25,
    maxDelayMs: 400,
  };

  const signedHeaders = async (operation: string, body: string): Promise<Record<string, string>> => {
    const signer = new AwsV4Signer({
      method: "POST",
      url: endpoint.href,
      headers: {
        "content-type": "application/x-amz-json-1.0",
        "x-amz-target": `DynamoDB_20120810.${operation}`,
      },
      body,
      ...settings.credentials,
      service: "dynamodb",
      region: settings.region,
      cache: signingKeyCache,
    });
    const { headers } = await signer.sign();
    return { ...Object.fromEntries(headers), "content-length": String(Buffer.byteLength(body)) };
  };

  const call = async (
    operation: string,
    input: object,
    signal: AbortSignal,
  ): Promise<Record<string, unknown>> => {
    const payload = JSON.stringify(input);
    let answer: OutboundResponse;
    try {
      const headers = await signedHeaders(operation, payload);
      answer = await sendRequest({ method: "POST", url: endpoint, headers, body: payload, signal });
    } catch (error) {
      throw new TransientStoreError(`${operation} failed: ${errorMessage(error)}`, { cause: error });
    }
    const { status } = answer;
    const text = answer.body.toString("utf8");
    const ok = status >= 200 && status < 300;
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      throw new TransientStoreError(`${operation} answered ${status} with a body that is not JSON`);
    }
    // `null`, a string or a list (a proxy's answer, not DynamoDB's) is as unreadable as no JSON.
    if (typeof body !== "object" || body === null || Array.isArray(body)) {
      throw new TransientStoreError(`${operation} answered ${status} with a body that is not an object`);
    }
    if (!ok) {
      const { __type, code } = body as { __type?: unknown; code?: unknown };
      const type =
        String(__type ?? code ?? "UnknownError")
          .split("#")
          .pop() ?? "UnknownError";
      throw new DynamoDbError(type, status, body as DynamoDbError["body"]);
    }
    return body as Record<string, unknown>;
  };

  const attemptPut = async (plant: NewPlant, signal: AbortSignal): Promise<PutOutcome> => {
    try {
      await call("PutItem", putIfAbsentInput(settings.tableName, plant), signal);
      return { created: true };
    } catch (error) {
      if (!(error instanceof DynamoDbError && error.type === CONDITION_FAILED)) throw error;
      // DynamoDB returns the old item; servers that ignore the option (dynalite) need a read.
      const oldItem = error.body.Item;
      const existing = oldItem ? fromItem(oldItem) : await readPlant(plant.id, signal);
      if (existing === undefined) {
        throw new TransientStoreError("the existing plant vanished between the write and the read");
      }
      return { created: false, existing };
    }
  };

  const readPlant = async (id: bigint, signal: AbortSignal): Promise<NewPlant | undefined> => {
    const body = await call(
      "GetItem",
      { TableName: settings.tableName, Key: { id: { N: id.toString() } }, ConsistentRead: true },
      signal,
    );
    return body.Item ? fromItem(body.Item as Item) : undefined;
  };

  return {
    async putIfAbsent(plant) {
      try {
        return await withRetries(policy, isRetryable, (signal) => attemptPut(plant, signal));
      } catch (error) {
        if (error instanceof RetriesExhaustedError) {
          throw new DependencyUnavailableError(
            "the plant store is unavailable; nothing was written, retry later",
            STORE_RETRY_AFTER_SECONDS,
            { cause: error },
          );
        }
        throw error;
      }
    },
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

function isRetryable(error: unknown): boolean {
  if (error instanceof TransientStoreError) return true;
  return error instanceof DynamoDbError && (RETRYABLE_TYPES.has(error.type) || error.status >= 500);
}

function toItem(plant: NewPlant): Item {
  const item: Item = { id: { N: plant.id.toString() }, name: { S: plant.name } };
  if (plant.tag !== undefined) item.tag = { S: plant.tag };
  return item;
}

function fromItem(item: Item): NewPlant {
  const id = item.id?.N;
  const name = item.name?.S;
  if (id === undefined || name === undefined) throw new Error("a stored plant lacks its id or name");
  const tag = item.tag?.S;
  return tag === undefined ? { id: BigInt(id), name } : { id: BigInt(id), name, tag };
}

function errorMessage(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = error.cause instanceof Error ? ` (${error.cause.message})` : "";
  return `${error.name}: ${error.message}${cause}`;
}
