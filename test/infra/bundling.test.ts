/**
 * The deployed bundle (staged by the CDK from infra/handler-code.ts) and the local one (built by
 * tools/build-bundle.ts) come from one description, tools/bundle-options.ts. Both must load and serve a
 * create end to end, and ship the same inputs: the project's SigV4 signer and token verifier, no package.
 */
import { execFile } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { promisify } from "node:util";
import { App, Stack } from "aws-cdk-lib";
import { Function as LambdaFunction, Runtime } from "aws-cdk-lib/aws-lambda";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HANDLER_SETTING, handlerCode } from "../../infra/handler-code.ts";
import type { ApiGatewayResult } from "../../lambda/http/api-gateway.ts";
import { apiGatewayEvent } from "../../support/events.ts";
import { type Harness, startHarness, TEST_TABLE } from "../../support/harness.ts";
import { buildBundle } from "../../tools/build-bundle.ts";
import { HANDLER_FACTORY_EXPORT } from "../../tools/bundle-options.ts";
import { readStoredItem } from "../support/stored-item.ts";

const execFileAsync = promisify(execFile);
const PROJECT_ROOT = fileURLToPath(new URL("../..", import.meta.url));
const DECLARED_DEPENDENCIES = (
  JSON.parse(readFileSync(join(PROJECT_ROOT, "package.json"), "utf8")) as { dependencies: object }
).dependencies;

let harness: Harness;
let token: string;
let localBundleDirectory: string;
let deployedAssemblyDirectory: string;
const bundles: Record<"deployed" | "local", string> = { deployed: "", local: "" };

beforeAll(async () => {
  harness = await startHarness();
  token = await harness.issuer.mint();
  deployedAssemblyDirectory = await mkdtemp(join(tmpdir(), "plant-store-synth-"));
  bundles.deployed = join(deployedBundleDirectory(deployedAssemblyDirectory), "index.mjs");
  localBundleDirectory = await mkdtemp(join(tmpdir(), "plant-store-bundle-"));
  bundles.local = await buildBundle(localBundleDirectory);
}, 120_000);

afterAll(async () => {
  await harness?.close();
  for (const directory of [localBundleDirectory, deployedAssemblyDirectory]) {
    if (directory) await rm(directory, { recursive: true, force: true });
  }
});

/** The asset the stack's function deploys (infra/handler-code.ts), as `cdk synth` stages it. */
function deployedBundleDirectory(outdir: string): string {
  const app = new App({ outdir });
  new LambdaFunction(new Stack(app, "BundlingCheck"), "Handler", {
    code: handlerCode(),
    handler: HANDLER_SETTING,
    runtime: Runtime.NODEJS_24_X,
  });
  const { directory } = app.synth();
  const assets = readdirSync(directory).filter((name) => name.startsWith("asset."));
  if (assets.length !== 1 || assets[0] === undefined) throw new Error(`expected one asset, got ${assets}`);
  return join(directory, assets[0]);
}

/**
 * Loads the bundle in a plain Node process, as Lambda does (a test runner's module loader would lend it
 * a `require` that Lambda does not have), and sends one create through its `handlerFor(environment)`.
 */
async function createWithBundle(
  bundlePath: string,
  id: number,
  name: string,
): Promise<{ result: ApiGatewayResult; loadedUndici: boolean }> {
  const event = apiGatewayEvent("2.0", { token, body: JSON.stringify({ id, name }) });
  const script = `
    const [bundlePath, environment, event] = process.argv.slice(1);
    const bundle = await import(bundlePath);
    const result = await bundle.${HANDLER_FACTORY_EXPORT}(JSON.parse(environment))(JSON.parse(event));
    const loadedUndici = process.moduleLoadList.some((name) => name.includes("undici"));
    process.stdout.write("\\nRESULT " + JSON.stringify({ result, loadedUndici }) + "\\n");
    process.exit(0);
  `;
  const { stdout } = await execFileAsync(process.execPath, [
    "--input-type=module",
    "--eval",
    script,
    pathToFileURL(bundlePath).href,
    JSON.stringify(harness.environment),
    JSON.stringify(event),
  ]);
  const resultLine = stdout.split("\n").find((line) => line.startsWith("RESULT "));
  if (resultLine === undefined) throw new Error(`the bundle answered nothing:\n${stdout}`);
  return JSON.parse(resultLine.slice("RESULT ".length)) as {
    result: ApiGatewayResult;
    loadedUndici: boolean;
  };
}

/** The project files the bundle's entry and chunks were built from, from their source maps. */
async function bundledSources(bundlePath: string): Promise<string[]> {
  const chunks = join(dirname(bundlePath), "chunks");
  const files = [
    bundlePath,
    ...readdirSync(chunks)
      .filter((name) => name.endsWith(".mjs"))
      .map((name) => join(chunks, name)),
  ];
  const sources = new Set<string>();
  for (const file of files) {
    const sourceMap = JSON.parse(await readFile(`${file}.map`, "utf8")) as {
      sources: string[];
      sourcesContent?: unknown;
    };
    expect(sourceMap.sourcesContent).toBeUndefined();
    // As paths in the project, wherever the bundle was written.
    for (const source of sourceMap.sources)
      sources.add(relative(PROJECT_ROOT, resolve(dirname(file), source)));
  }
  return [...sources];
}

describe.each(["deployed", "local"] as const)("the %s bundle", (kind) => {
  it("loads, signs its DynamoDB call, and creates a plant", async () => {
    const id = kind === "deployed" ? 1 : 2;
    const { result, loadedUndici } = await createWithBundle(bundles[kind], id, `Fern ${kind}`);
    expect(result.statusCode).toBe(200);
    // undici (Node's fetch, ~15 ms to load) has no part in a create; on Node 22 and later, importing
    // node:http as an ES module loads it (its facade reads every export), so the function does not.
    expect(loadedUndici).toBe(false);
    // This read reuses a connection idle since the harness started: a reset one is retried.
    expect(await readStoredItem(harness.dynamoDb.endpoint, TEST_TABLE, id)).toEqual({
      id: { N: String(id) },
      name: { S: `Fern ${kind}` },
    });
  });

  it("ships the declared dependencies' code beside lambda/, and no other package", async () => {
    const sources = await bundledSources(bundles[kind]);
    const packageOf = (source: string) => /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(source)?.[1];
    const shipped = new Set(sources.map(packageOf).filter((name) => name !== undefined));
    expect([...shipped].sort()).toEqual(Object.keys(DECLARED_DEPENDENCIES).sort());
    const code = await readFile(bundles[kind], "utf8");
    expect(code).not.toContain("createDynamoDbPlantStore"); // minified
  });
});

describe("the two bundles", () => {
  it.each(["deployed", "local"] as const)(
    "%s: the refusals' messages are a chunk of their own, imported only at the first body refused",
    async (kind) => {
      const entry = await readFile(bundles[kind], "utf8");
      expect(entry).toMatch(/import\("\.\/chunks\/schema-refusals-[\w-]+\.mjs"\)/);
      expect(entry).not.toMatch(/from\s*"\.\/chunks\/schema-refusals-/);
    },
  );

  it("are built from the same inputs", async () => {
    expect((await bundledSources(bundles.deployed)).sort()).toEqual(
      (await bundledSources(bundles.local)).sort(),
    );
  });
});
