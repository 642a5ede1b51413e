/**
 * Item 5: the cost per million creates at the stack's default memory, priced at the loopback warm
 * duration (item 2) and estimated for AWS from the warm create's CPU (item 3).
 */
import { costPerMillionCreates, estimatedAwsDurationMs } from "../cost.ts";
import { PRICES_READ_ON, PRICES_REGION } from "../prices.ts";
import { infoRow, ms, usd } from "../report.ts";
import type { ItemResult } from "./item.ts";

/** In-region DynamoDB PutItem round trips, as commonly observed: an assumption, not a measurement. */
const AWS_STORE_ROUND_TRIP_MS = { low: 3, high: 8 } as const;

export function costItem(warmDurationMs: number, createCpuMicros: number, memoryMb: number): ItemResult {
  const measured = costPerMillionCreates(warmDurationMs, memoryMb);
  const estimate = (storeRoundTripMs: number) =>
    costPerMillionCreates(estimatedAwsDurationMs(createCpuMicros, memoryMb, storeRoundTripMs), memoryMb);
  const low = estimate(AWS_STORE_ROUND_TRIP_MS.low);
  const high = estimate(AWS_STORE_ROUND_TRIP_MS.high);
  return {
    rows: [
      infoRow(
        "5",
        `Cost/1M creates, ${memoryMb} MB, loopback warm ${ms(measured.durationMs)}`,
        usd(measured.totalUsd),
      ),
      infoRow(
        "5",
        `Cost/1M creates, AWS estimate: billed ${low.billedMs}–${high.billedMs} ms`,
        `${usd(low.totalUsd)}–${usd(high.totalUsd)}`,
      ),
    ],
    notes: [
      `cost per 1M creates (measured duration): Lambda compute ${usd(measured.lambdaComputeUsd)}, ` +
        `Lambda requests ${usd(measured.lambdaRequestsUsd)}, HTTP API ${usd(measured.httpApiUsd)}, ` +
        `DynamoDB writes ${usd(measured.dynamoDbUsd)}; ${PRICES_REGION} prices of ${PRICES_READ_ON} (bench/prices.ts)`,
    ],
  };
}
