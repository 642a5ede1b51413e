/** What DynamoDB's failures mean: which are worth a retry and of which kind, and which may have written. */
import type { RetryReason } from "../retry/standard-retry.ts";
import { DynamoDbError, TransientDynamoDbError } from "./dynamodb-client.ts";

/** DynamoDB's throttling error types: retried at the quota's lower cost. */
export const THROTTLING_TYPES = new Set([
  "ProvisionedThroughputExceededException",
  "ThrottlingException",
  "RequestLimitExceeded",
  "TransactionConflictException",
]);
/**
 * A write refused because another Region is changing the same item (multi-Region strong consistency):
 * nothing was written, and DynamoDB's model marks it retryable, which the SDKs' standard mode counts as a
 * transient fault.
 */
const WRITE_CONFLICT_TYPES = new Set(["ReplicatedWriteConflictException"]);
/** The statuses the SDKs count as transient faults (they cost the retry quota more). */
const TRANSIENT_STATUSES = new Set([500, 502, 503, 504]);

/** Which failures are retried, and how the SDKs' standard mode classifies them; undefined: not retried. */
export function retryableFault(error: unknown): RetryReason | undefined {
  if (error instanceof TransientDynamoDbError) return "transient";
  if (!(error instanceof DynamoDbError)) return undefined;
  if (THROTTLING_TYPES.has(error.type)) return "throttling";
  if (WRITE_CONFLICT_TYPES.has(error.type)) return "transient";
  if (TRANSIENT_STATUSES.has(error.status)) return "transient";
  if (error.status >= 500) return "server-error";
  return undefined;
}

/** Whether a write that failed so may still have applied: it was sent and got no answer, or a 5xx. */
export function mayHaveApplied(error: unknown): boolean {
  if (error instanceof TransientDynamoDbError) return error.requestSent;
  return error instanceof DynamoDbError && error.status >= 500;
}
