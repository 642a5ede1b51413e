/**
 * Item 4: `npm start`'s API under load beside raw PutItem calls to dynalite. Information only: it
 * measures a development server, where the handler, the HTTP bridge and dynalite share one process and
 * one core, not anything a user of the deployed API pays for (docs/PERFORMANCE.md).
 */
import { type LoadResult, measureLocalLoad } from "../local-load.ts";
import { infoRow, ms, times } from "../report.ts";
import type { ItemResult } from "./item.ts";

export interface LocalLoadItemSetup {
  connections: number;
  seconds: number;
  warmUpSeconds: number;
}

export async function localLoadItem(setup: LocalLoadItemSetup): Promise<ItemResult> {
  const load = await measureLocalLoad(setup);
  const describe = (result: LoadResult) =>
    `${result.createsPerSecond.toFixed(0)}/s, p50 ${ms(result.latency.median)}, p99 ${ms(result.latency.p99)}`;
  return {
    rows: [
      infoRow(
        "4",
        `Local path (npm start's API), ${setup.connections} connections, ${setup.seconds} s`,
        describe(load.localPath),
      ),
      infoRow("4", "Raw PutItem to dynalite, same connections", describe(load.rawStore)),
      infoRow(
        "4",
        "Local path ratio, raw / local creates per second",
        `${times(load.ratio)} (p50 ${times(load.latencyRatio)})`,
      ),
    ],
    notes: [
      "local path: no budget; it measures the development server, whose bridge, handler and dynalite " +
        "share one process, not what the deployed API costs",
    ],
  };
}
