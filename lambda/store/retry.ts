/**
 * The retry quota as client/retry.ts imports it, until the client adopts the one retry strategy
 * (lambda/retry/standard-retry.ts) itself; nothing in lambda/ imports this file.
 */
export {
  NO_RETRY_INCREMENT,
  RETRY_COST,
  RetryQuota,
  TRANSIENT_RETRY_COST,
} from "../retry/standard-retry.ts";
