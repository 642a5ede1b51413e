import {
  DYNAMODB_USD_PER_MILLION_WRITE_UNITS,
  HTTP_API_USD_PER_MILLION_REQUESTS,
  LAMBDA_ARM64_USD_PER_GB_SECOND,
  LAMBDA_USD_PER_MILLION_REQUESTS,
} from "./prices.ts";

/** Lambda allocates CPU in proportion to memory: 1,769 MB is one full vCPU (AWS documentation). */
export const MEMORY_MB_PER_VCPU = 1769;

/** The fraction of one vCPU a function of that memory gets. */
export function cpuFraction(memoryMb: number): number {
  return Math.min(1, memoryMb / MEMORY_MB_PER_VCPU);
}

/** What a million creates cost, by part and in all, at `durationMs` each on `memoryMb`. */
export function costPerMillionCreates(durationMs: number, memoryMb: number) {
  // Lambda bills each invocation's duration rounded up to the millisecond.
  const billedMs = Math.ceil(durationMs);
  const parts = {
    lambdaComputeUsd: 1e6 * (billedMs / 1000) * (memoryMb / 1024) * LAMBDA_ARM64_USD_PER_GB_SECOND,
    lambdaRequestsUsd: LAMBDA_USD_PER_MILLION_REQUESTS,
    httpApiUsd: HTTP_API_USD_PER_MILLION_REQUESTS,
    // One write request unit per create: the item is well under 1 KB.
    dynamoDbUsd: DYNAMODB_USD_PER_MILLION_WRITE_UNITS,
  };
  return { ...parts, totalUsd: Object.values(parts).reduce((sum, part) => sum + part, 0) };
}
