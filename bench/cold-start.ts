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
  // The peers import the delivered keys at init (the handler, without AWS_LAMBDA_FUNCTION_NAME, reads
  // no configuration at import): an empty set, so that their rows are the client's import alone.
  JWKS_JSON: '{"keys":[]}',
  JWT_CLIENT_IDS: "plant-store-local",
};

export interface ColdStartResult {
  bundle: Summary;
  empty: Summary;
  /** The other bundles' imports, by name, measured in the same rounds. */
  others: Map<string, Summary>;
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
  others: { name: string; path: string; environment?: Record<string, string> }[] = [],
): Promise<ColdStartResult> {
  const subjects = [{ name: "bundle", path: bundlePath }, { name: "empty", path: emptyPath }, ...others].map(
    (subject) => ({ ...subject, times: [] as number[] }),
  );
  for (let round = 0; round < rounds; round++) {
    const start = round % subjects.length;
    for (const subject of [...subjects.slice(start), ...subjects.slice(0, start)]) {
      const environment = "environment" in subject ? subject.environment : undefined;
      subject.times.push(await timeImport(subject.path, { ...DUMMY_ENVIRONMENT, ...environment }));
    }
  }
  const [bundle, empty, ...rest] = subjects.map((subject) => summarize(subject.times));
  if (bundle === undefined || empty === undefined) throw new Error("nothing was imported");
  const othersByName = new Map(others.map((other, index) => [other.name, rest[index] as Summary]));
  return { bundle, empty, others: othersByName, ratio: bundle.median / empty.median };
}
