/**
 * Item 3: the warm create's CPU against the warm floor's (bench/warm-floor.ts), same process, same
 * store, blocks interleaved: what the handler's own code costs a warm instance beyond the least. Extra
 * bundles (a lever's, another commit's) get a row each, measured the same way after the shipped one.
 */
import type { BenchBundles } from "../bundles.ts";
import { budgetRow, infoRow, micros, times } from "../report.ts";
import { measureWarmCpu, type WarmCpuResult } from "../warm-cpu.ts";
import type { ExtraBundle } from "./cold-path-subjects.ts";
import { type ItemResult, withHarness } from "./item.ts";

const WARM_CPU_BUDGET = 1.15;

/** The medians, CPU per call, that item 5 prices. */
export interface WarmCpuMedians {
  createCpuMicros: number;
  floorCpuMicros: number;
  dutiesCpuMicros: number;
}

export interface WarmCpuItemSetup {
  bundles: BenchBundles;
  creates: number;
  /** More bundles (BENCH_COLD_EXTRA_BUNDLES), each measured the same way in a process of its own. */
  extra: ExtraBundle[];
}

export async function warmCpuItem({
  bundles,
  creates,
  extra,
}: WarmCpuItemSetup): Promise<ItemResult & WarmCpuMedians> {
  const { warm, extraWarm } = await withHarness(async ({ environment, token }) => {
    const measure = (handlerPath: string) =>
      measureWarmCpu({
        environment,
        token,
        creates,
        handlerPath,
        floorPath: bundles.warmFloorPath,
        dutiesFloorPath: bundles.dutiesFloorPath,
      });
    const shipped = await measure(bundles.handlerPath);
    const others: { name: string; result: WarmCpuResult }[] = [];
    for (const bundle of extra) others.push({ name: bundle.name, result: await measure(bundle.path) });
    return { warm: shipped, extraWarm: others };
  });
  return {
    createCpuMicros: warm.createCpuMicros.median,
    floorCpuMicros: warm.floorCpuMicros.median,
    dutiesCpuMicros: warm.dutiesCpuMicros.median,
    json: { warmCpu: warm, warmCpuExtra: extraWarm },
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
      infoRow(
        "3",
        "Warm floor with the API's duties (claims, body, timeout, answer, log line): CPU, median (p90)",
        `${micros(warm.dutiesCpuMicros.median)} (${micros(warm.dutiesCpuMicros.p90)})`,
      ),
      infoRow("3", "Warm CPU ratio, create / warm floor with duties", times(warm.dutiesRatio)),
      ...extraWarm.map(({ name, result }) =>
        infoRow(
          "3",
          `Warm CPU ratio, ${name} / warm floor`,
          `${times(result.ratio)} (${micros(result.createCpuMicros.median)} / ${micros(result.floorCpuMicros.median)})`,
        ),
      ),
    ],
    notes: [
      `warm wall time per call: create ${micros(warm.createWallMicros.median)}, ` +
        `warm floor ${micros(warm.floorWallMicros.median)}, with duties ${micros(warm.dutiesWallMicros.median)} ` +
        "(medians, the store's time included)",
    ],
  };
}
