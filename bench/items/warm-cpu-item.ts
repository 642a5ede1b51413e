/**
 * Item 3: the warm create's CPU against the warm floor's (bench/warm-floor.ts), same process, same
 * store, blocks interleaved: what the handler's own code costs a warm instance beyond the least.
 */
import type { BenchBundles } from "../bundles.ts";
import { budgetRow, infoRow, micros, times } from "../report.ts";
import { measureWarmCpu } from "../warm-cpu.ts";
import { type ItemResult, withHarness } from "./item.ts";

const WARM_CPU_BUDGET = 1.15;

export async function warmCpuItem(
  bundles: BenchBundles,
  creates: number,
): Promise<ItemResult & { createCpuMicros: number }> {
  const warm = await withHarness(({ environment, token }) =>
    measureWarmCpu({
      environment,
      token,
      creates,
      handlerPath: bundles.handlerPath,
      floorPath: bundles.warmFloorPath,
    }),
  );
  return {
    createCpuMicros: warm.createCpuMicros.median,
    json: { warmCpu: warm },
    rows: [
      infoRow(
        "3",
        "Warm create, PutItem on an open connection: CPU, median (p90)",
        `${micros(warm.createCpuMicros.median)} (${micros(warm.createCpuMicros.p90)})`,
      ),
      infoRow(
        "3",
        "Warm floor: verify, sign, PutItem: CPU, median (p90)",
        `${micros(warm.floorCpuMicros.median)} (${micros(warm.floorCpuMicros.p90)})`,
      ),
      budgetRow(
        "3",
        "Warm CPU ratio, create / warm floor",
        times(warm.ratio),
        warm.ratio,
        WARM_CPU_BUDGET,
        `≤ ${WARM_CPU_BUDGET}×`,
      ),
    ],
    notes: [
      `warm wall time per call: create ${micros(warm.createWallMicros.median)}, ` +
        `warm floor ${micros(warm.floorWallMicros.median)} (medians, the store's time included)`,
    ],
  };
}
