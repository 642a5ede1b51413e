/**
 * Item 2, on loopback: fresh processes importing the bundle and answering a first create, then more on
 * the warm instance, against plain-HTTP dynalite and key-set server with no delay, the issuer's key set
 * delivered in JWKS_JSON as the function ships (extra bundles get the same environment). Information
 * only; its warm median is the duration the cost (item 5) is priced at.
 */
import type { BenchBundles } from "../bundles.ts";
import { measureFirstInvocations } from "../first-invocation.ts";
import { infoRow, ms } from "../report.ts";
import type { ExtraBundle } from "./cold-path-subjects.ts";
import { type ItemResult, withHarness } from "./item.ts";

export interface FirstInvocationItemSetup {
  bundles: BenchBundles;
  extra: ExtraBundle[];
  runs: number;
  warmCallsPerRun: number;
}

export async function firstInvocationItem(
  setup: FirstInvocationItemSetup,
): Promise<ItemResult & { warmDurationMs: number }> {
  const [first, ...others] = await withHarness(({ environment, token, deliveredKeySet }) =>
    measureFirstInvocations(
      {
        bundlePath: setup.bundles.handlerPath,
        // As in Lambda, and as item 2's cold path: the handler's init runs at import, not at the first call.
        environment: {
          ...environment,
          JWKS_JSON: deliveredKeySet,
          AWS_LAMBDA_FUNCTION_NAME: "plant-store-bench",
        },
        token,
        runs: setup.runs,
        warmCallsPerRun: setup.warmCallsPerRun,
      },
      setup.extra.map((extra) => extra.path),
    ),
  );
  if (first === undefined) throw new Error("the handler was not measured");
  const rows = [
    infoRow(
      "2",
      "Loopback, no TLS: import + first create (p90)",
      `${ms(first.first.median)} (${ms(first.first.p90)})`,
    ),
    infoRow(
      "2",
      "Loopback: later creates, warm, median (p99)",
      `${ms(first.warm.median)} (${ms(first.warm.p99)})`,
    ),
  ];
  for (const [index, extra] of setup.extra.entries()) {
    const result = others[index];
    if (result === undefined) continue;
    rows.push(
      infoRow(
        "2",
        `${extra.name}, loopback: first; later creates (p99)`,
        `${ms(result.first.median)}; ${ms(result.warm.median)} (${ms(result.warm.p99)})`,
      ),
    );
  }
  const notes = [
    `first invocation on loopback: the import part ${ms(first.importOnly.median)} median, ` +
      `the first create ${ms(first.first.median - first.importOnly.median)} (difference of medians)`,
  ];
  return { rows, notes, warmDurationMs: first.warm.median };
}
