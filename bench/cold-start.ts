import { pathToFileURL } from "node:url";
import { runNodeForJson } from "./child-process.ts";
import { type Summary, summarize } from "./stats.ts";

/** What a fresh process spends in `await import(bundle)`: module loading, compiling, top-level code. */
const IMPORT_PROBE = `
const startedAt = performance.now();
await import(process.argv[1]);
process.stdout.write(JSON.stringify({ importMs: performance.now() - startedAt }) + "\\n");
`;

/** Configuration the bundle reads at import; nothing is contacted at import, so dummies do. */
const DUMMY_ENVIRONMENT = {
  TABLE_NAME: "plants",
  AWS_REGION: "us-east-1",
  AWS_ACCESS_KEY_ID: "bench",
  AWS_SECRET_ACCESS_KEY: "bench",
  AWS_ENDPOINT_URL_DYNAMODB: "http://127.0.0.1:9",
  JWT_ISSUER: "https://issuer.plants.test",
  JWKS_URL: "http://127.0.0.1:9/.well-known/jwks.json",
  JWT_CLIENT_IDS: "plant-store-local",
};

export interface ColdStartResult {
  bundle: Summary;
  empty: Summary;
  /** Median bundle import over median empty-handler import, same run. */
  ratio: number;
}

async function timeImport(modulePath: string, environment: Record<string, string>): Promise<number> {
  const args = ["--input-type=module", "--eval", IMPORT_PROBE, pathToFileURL(modulePath).href];
  return (await runNodeForJson<{ importMs: number }>(args, environment)).importMs;
}

/**
 * Imports the bundle and the empty handler in fresh processes, interleaved, alternating which goes
 * first in a round, so that drift in the machine's load falls on both alike.
 */
export async function measureColdStart(
  bundlePath: string,
  emptyPath: string,
  rounds: number,
): Promise<ColdStartResult> {
  const bundleTimes: number[] = [];
  const emptyTimes: number[] = [];
  for (let round = 0; round < rounds; round++) {
    const order = round % 2 === 0 ? ["bundle", "empty"] : ["empty", "bundle"];
    for (const which of order) {
      if (which === "bundle") bundleTimes.push(await timeImport(bundlePath, DUMMY_ENVIRONMENT));
      else emptyTimes.push(await timeImport(emptyPath, DUMMY_ENVIRONMENT));
    }
  }
  const bundle = summarize(bundleTimes);
  const empty = summarize(emptyTimes);
  return { bundle, empty, ratio: bundle.median / empty.median };
}
