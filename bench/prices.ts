/**
 * Public on-demand list prices, us-east-1, as stated current for 2026 when copied on 2026-11-22;
 * not re-read from the AWS pricing pages (the benchmark machine has no network). Re-read them before
 * quoting a cost: they change, and they differ by region.
 */
export const PRICES_READ_ON = "2026-11-22";
export const PRICES_REGION = "us-east-1";

/** AWS Lambda, Arm (Graviton), first 7.5 billion GB-seconds a month. */
export const LAMBDA_ARM64_USD_PER_GB_SECOND = 0.0000133334;
export const LAMBDA_USD_PER_MILLION_REQUESTS = 0.2;
/** API Gateway HTTP API, first 300 million requests a month (per 512 KB request). */
export const HTTP_API_USD_PER_MILLION_REQUESTS = 1.0;
/** DynamoDB on-demand: one write request unit per write of an item up to 1 KB. */
export const DYNAMODB_USD_PER_MILLION_WRITE_UNITS = 0.625;
