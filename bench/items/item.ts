/** What every bench item returns: its rows of the table, and what else the run prints and keeps. */
import { startHarness } from "../../support/harness.ts";
import type { Row } from "../report.ts";

export interface ItemResult {
  rows: Row[];
  /** Printed with --verbose, under the table. */
  notes?: string[];
  /** Merged into dist/bench/results.json. */
  json?: Record<string, unknown>;
  /** A table of its own, printed under the main one. */
  appendix?: string;
}

/** The store (dynalite, in memory, in this process) and key-set server an item measures against. */
export interface BenchHarness {
  /** The handler's configuration: plain-HTTP dynalite with the table, the key-set server. */
  environment: Record<string, string>;
  /** A valid access token for it. */
  token: string;
  /** The issuer's public key set as the stack delivers it to the function (JWKS_JSON): compact JSON. */
  deliveredKeySet: string;
}

/** A harness of the item's own, closed when `use` is done. */
export async function withHarness<T>(use: (harness: BenchHarness) => Promise<T>): Promise<T> {
  const harness = await startHarness();
  try {
    return await use({
      environment: harness.environment,
      token: await harness.issuer.mint(),
      deliveredKeySet: JSON.stringify(harness.issuer.jwks),
    });
  } finally {
    await harness.close();
  }
}
