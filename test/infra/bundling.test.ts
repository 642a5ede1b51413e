/**
 * The deployed bundle (staged by the CDK from infra/handler-code.ts) and the local one (built by
 * tools/build-bundle.ts) come from one description, tools/bundle-options.ts. Both must load and serve a
 * create end to end, and ship the same inputs: the project's SigV4 signer and token verifier, no package.
 */
import { execFile } from "node:child_process";
import { readdirSync } from "node:fs";
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
): Promise<{ result: ApiGatewayResult; cryptoLoadedAtImport: boolean }> {
  const event = apiGatewayEvent("2.0", { token, body: JSON.stringify({ id, name }) });
  const script = `
    const [bundlePath, environment, event] = process.argv.slice(1);
    const bundle = await import(bundlePath);
    const cryptoLoadedAtImport = process.moduleLoadList.includes("NativeModule crypto");
    const result = await bundle.${HANDLER_FACTORY_EXPORT}(JSON.parse(environment))(JSON.parse(event));
    process.stdout.write("\\nRESULT " + JSON.stringify({ result, cryptoLoadedAtImport }) + "\\n");
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
    cryptoLoadedAtImport: boolean;
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
    const { result } = await createWithBundle(bundles[kind], id, `Fern ${kind}`);
    expect(result.statusCode).toBe(200);
    // This read reuses a connection idle since the harness started: the race CI once lost (see
    // test/lambda/http-request.test.ts), which the client now survives.
    expect(await readStoredItem(harness.dynamoDb.endpoint, TEST_TABLE, id)).toEqual({
      id: { N: String(id) },
      name: { S: `Fern ${kind}` },
    });
  });

  it("signs with its own SigV4 and verifies tokens with aws-jwt-verify's Node build, no other package", async () => {
    const sources = await bundledSources(bundles[kind]);
    expect(sources).toContain("lambda/store/sigv4.ts");
    expect(sources).toContain("node_modules/aws-jwt-verify/dist/esm/node-web-compat-node.js");
    expect(sources).not.toContain("node_modules/aws-jwt-verify/dist/esm/node-web-compat-web.js");
    expect(sources).toContain("lambda/tracing/invocation-tracing.ts");
    const packages = sources.filter((source) => source.includes("node_modules"));
    expect(packages.filter((source) => !source.includes("node_modules/aws-jwt-verify/"))).toEqual([]);
    const code = await readFile(bundles[kind], "utf8");
    expect(code).not.toContain("createDynamoDbPlantStore"); // minified
  });
});

describe("the two bundles", () => {
  it.each(["deployed", "local"] as const)(
    "%s: the traces are a chunk of their own, imported only at the first sampled invocation",
    async (kind) => {
      const entry = await readFile(bundles[kind], "utf8");
      expect(entry).toMatch(/import\("\.\/chunks\/invocation-tracing-[\w-]+\.mjs"\)/);
      expect(entry).not.toMatch(/from\s*"\.\/chunks\/invocation-tracing-/);
    },
  );

  it("are built from the same inputs", async () => {
    expect((await bundledSources(bundles.deployed)).sort()).toEqual(
      (await bundledSources(bundles.local)).sort(),
    );
  });
});
