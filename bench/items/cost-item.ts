/**
 * Item 5: the cost per million creates at the stack's default memory, priced at the loopback warm
 * duration (item 2) and estimated for AWS from the warm create's CPU (item 3); and what the CPU beyond
 * each floor adds to the bill (the warm create's beyond item 3's floors, the first answer's beyond item
 * 2's issuer-free floor), so that a missed CPU budget can be weighed in dollars.
 */
import { costPerMillionCreates, cpuCostPerMillionCallsUsd, estimatedAwsDurationMs } from "../cost.ts";
import { PRICES_READ_ON, PRICES_REGION } from "../prices.ts";
import { infoRow, ms, usd } from "../report.ts";
import type { ItemResult } from "./item.ts";
import type { WarmCpuMedians } from "./warm-cpu-item.ts";

/** In-region DynamoDB PutItem round trips, as commonly observed: an assumption, not a measurement. */
const AWS_STORE_ROUND_TRIP_MS = { low: 3, high: 8 } as const;

export interface CostItemSetup {
  /** Item 2's loopback warm create. */
  warmDurationMs: number;
  warmCpu: WarmCpuMedians;
  /** Item 2's first answer at RTT 0: the handler's CPU beyond the issuer-free floor's, when it ran. */
  coldCpuBeyondFloorMs: number | undefined;
  memoryMb: number;
}

export function costItem({
  warmDurationMs,
  warmCpu,
  coldCpuBeyondFloorMs,
  memoryMb,
}: CostItemSetup): ItemResult {
  const { createCpuMicros } = warmCpu;
  const measured = costPerMillionCreates(warmDurationMs, memoryMb);
  const estimate = (storeRoundTripMs: number) =>
    costPerMillionCreates(estimatedAwsDurationMs(createCpuMicros, memoryMb, storeRoundTripMs), memoryMb);
  const low = estimate(AWS_STORE_ROUND_TRIP_MS.low);
  const high = estimate(AWS_STORE_ROUND_TRIP_MS.high);
  const beyond = (floorCpuMicros: number) => {
    const extraUsd = cpuCostPerMillionCallsUsd(createCpuMicros - floorCpuMicros, memoryMb);
    return `${usd(extraUsd, 4)}, ${((100 * extraUsd) / low.totalUsd).toFixed(2)}% of ${usd(low.totalUsd)}`;
  };
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
      infoRow("5", "Cost/1M creates of the warm CPU beyond the warm floor", beyond(warmCpu.floorCpuMicros)),
      infoRow(
        "5",
        "Cost/1M creates of the warm CPU beyond the warm floor with duties",
        beyond(warmCpu.dutiesCpuMicros),
      ),
      ...(coldCpuBeyondFloorMs === undefined
        ? []
        : [
            infoRow(
              "5",
              "Cost/1M cold starts of the first answer's CPU beyond the issuer-free floor (RTT 0)",
              `${usd(cpuCostPerMillionCallsUsd(coldCpuBeyondFloorMs * 1000, memoryMb))} ` +
                `(${ms(coldCpuBeyondFloorMs)} of CPU at a full core)`,
            ),
          ]),
    ],
    notes: [
      `cost per 1M creates (measured duration): Lambda compute ${usd(measured.lambdaComputeUsd)}, ` +
        `Lambda requests ${usd(measured.lambdaRequestsUsd)}, HTTP API ${usd(measured.httpApiUsd)}, ` +
        `DynamoDB writes ${usd(measured.dynamoDbUsd)}; ${PRICES_REGION} prices of ${PRICES_READ_ON} (bench/prices.ts)`,
    ],
  };
}
