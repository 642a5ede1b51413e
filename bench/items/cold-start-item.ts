/** Item 1: the bundle's size and its import, against an empty handler's, beside the peers'. */
import type { BenchBundles } from "../bundles.ts";
import { measureColdStart } from "../cold-start.ts";
import { budgetRow, infoRow, ms, type Row, times } from "../report.ts";
import type { Summary } from "../stats.ts";
import type { ItemResult } from "./item.ts";

export const BUNDLE_BUDGET_KIB = 40;
const IMPORT_RATIO_BUDGET = 1.5;

const kib = (bytes: number) => `${(bytes / 1024).toFixed(1)} KiB`;

/** The sizes: no measurement, so always shown. BENCH_STRICT fails the run when the bundle is over. */
export function bundleSizeRows(bundles: BenchBundles): Row[] {
  return [
    budgetRow(
      "1",
      "Bundle size, minified, no source map",
      kib(bundles.handlerBytes),
      bundles.handlerBytes / 1024,
      BUNDLE_BUDGET_KIB,
      `≤ ${BUNDLE_BUDGET_KIB} KiB`,
    ),
    ...bundles.peers.map((peer) => infoRow("1", `Bundle size, ${peer.name}`, kib(peer.bytes))),
  ];
}

export async function coldStartItem(bundles: BenchBundles, rounds: number): Promise<ItemResult> {
  // The peers build their client and take the keys at import, as the handler does only in Lambda (its
  // init): the handler with AWS_LAMBDA_FUNCTION_NAME set is the row to read beside theirs.
  const withInit = {
    name: "handler with Lambda's init, as the peers' rows",
    path: bundles.handlerPath,
    environment: { AWS_LAMBDA_FUNCTION_NAME: "plant-store-bench" },
  };
  const cold = await measureColdStart(bundles.handlerPath, bundles.emptyPath, rounds, [
    withInit,
    ...bundles.peers,
  ]);
  return {
    json: { import: { bundle: cold.bundle, empty: cold.empty, others: Object.fromEntries(cold.others) } },
    rows: [
      infoRow("1", "Import of the bundle, median (p90)", importTime(cold.bundle)),
      infoRow("1", "Import of an empty handler, same run, interleaved", importTime(cold.empty)),
      budgetRow(
        "1",
        "Import ratio, bundle / empty handler (medians)",
        times(cold.ratio),
        cold.ratio,
        IMPORT_RATIO_BUDGET,
        `≤ ${IMPORT_RATIO_BUDGET}×`,
      ),
      ...[...cold.others].map(([name, summary]) =>
        infoRow(
          "1",
          `Import, ${name}`,
          `${importTime(summary)}, ${times(summary.median / cold.empty.median)} empty`,
        ),
      ),
    ],
  };
}

function importTime(summary: Summary): string {
  return `${ms(summary.median)} (${ms(summary.p90)})`;
}
