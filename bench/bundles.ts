import { copyFile, mkdir, stat } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { type BuildOptions, build, type Plugin } from "esbuild";
import { buildBundle } from "../tools/build-bundle.ts";
import { esbuildOptions, HANDLER_ENTRY } from "../tools/bundle-options.ts";
import { PROJECT_ROOT } from "./child-process.ts";

const BENCH_DIST = new URL("../dist/bench/", import.meta.url);
const EMPTY_HANDLER = 'export const handler = async () => ({ statusCode: 200, body: "" });\n';

/**
 * A module of the handler swapped, in a variant bundle only, for a wrapper that re-exports it with
 * some exports replaced: how the bench switches off a cold-start lever without touching lambda/.
 */
export interface ModuleOverride {
  /** The module's file, relative to the project root. */
  module: string;
  /** Code defining the replaced exports; `original` is the module itself (`import * as original`). */
  exports: string;
}

/** The handler without one of the cold-start levers: the bench measures each against the shipped one. */
export interface LeverVariant {
  name: string;
  overrides: ModuleOverride[];
  /** Whether the store's connection is still opened at init: the cold path's network model needs it. */
  storePrewarmed: boolean;
}

const WITHOUT_KEY_PREFETCH: ModuleOverride = {
  module: "lambda/auth/authenticate.ts",
  exports:
    "export const createAuthenticator = (policy, options) =>\n" +
    "  original.createAuthenticator(policy, { ...options, prefetchKeys: false });\n",
};

const WITHOUT_STORE_PREWARM: ModuleOverride = {
  module: "lambda/store/dynamodb-client.ts",
  exports:
    "export const createDynamoDbClient = (settings) =>\n" +
    "  ({ ...original.createDynamoDbClient(settings), prewarm: async () => {} });\n",
};

export const LEVER_VARIANTS: LeverVariant[] = [
  { name: "without key prefetch", overrides: [WITHOUT_KEY_PREFETCH], storePrewarmed: true },
  { name: "without store prewarm", overrides: [WITHOUT_STORE_PREWARM], storePrewarmed: false },
  {
    name: "without both",
    overrides: [WITHOUT_KEY_PREFETCH, WITHOUT_STORE_PREWARM],
    storePrewarmed: false,
  },
];

/** V8's explicit compile hint: every function of the file compiled eagerly, at load (Node 22+). */
export const EAGER_COMPILE_HINT = "//# allFunctionsCalledOnLoad";

/** Bundle-level levers: the shipped bundle built with other esbuild options, measured beside it. */
export const BUNDLE_LEVERS: { name: string; options: BuildOptions }[] = [
  { name: "with eager compile hint", options: { banner: { js: EAGER_COMPILE_HINT } } },
];

/**
 * The peers the README's claims about the AWS SDK rest on (bench/peers/): the same create written with
 * each client, bundled for Node as a team would deploy it (no "browser" condition).
 */
export const PEERS = [
  {
    name: "peer: AWS SDK v3 DynamoDBClient",
    source: "./bench/peers/aws-sdk-v3.ts",
    file: "peer-aws-sdk-v3.mjs",
  },
  { name: "peer: aws-lite DynamoDB", source: "./bench/peers/aws-lite.ts", file: "peer-aws-lite.mjs" },
] as const;

export interface BenchBundles {
  /** A copy of the deployable bundle, so a rebuild elsewhere cannot change it mid-run. */
  handlerPath: string;
  /** The empty handler, built with the same options: the floor a cold start is compared with. */
  emptyPath: string;
  /** The deployable bundle's size, source map excluded. */
  handlerBytes: number;
  /** bench/floor-handlers.ts's floors, each built as its own bundle with the same options. */
  storeFloorPath: string;
  verifyingFloorPath: string;
  unorderedFloorPath: string;
  /** The handler built without each lever, named as in LEVER_VARIANTS, and with each of BUNDLE_LEVERS. */
  leverVariants: { name: string; path: string; storePrewarmed: boolean }[];
  /** PEERS, built; each with its size. */
  peers: { name: string; path: string; bytes: number }[];
}

export async function buildBenchBundles(): Promise<BenchBundles> {
  await mkdir(BENCH_DIST, { recursive: true });
  const shipped = await buildBundle();
  const handlerPath = benchPath("handler.mjs");
  await copyFile(shipped, handlerPath);
  const floors = "./bench/floor-handlers.ts";
  const leverVariants = await Promise.all([
    ...LEVER_VARIANTS.map(async (variant, index) => ({
      name: variant.name,
      storePrewarmed: variant.storePrewarmed,
      path: await buildVariant(`handler-lever-variant-${index + 1}.mjs`, variant.overrides),
    })),
    ...BUNDLE_LEVERS.map(async (lever, index) => ({
      name: lever.name,
      storePrewarmed: true,
      path: await buildVariant(`handler-bundle-lever-${index + 1}.mjs`, [], lever.options),
    })),
  ]);
  const peers = await Promise.all(
    PEERS.map(async (peer) => {
      const path = await buildFromSource(peer.file, `export { handler } from "${peer.source}";\n`, {
        conditions: [],
        sourcemap: false,
        // The SDK's CommonJS modules require() Node's built-ins: an ES module bundle needs a require.
        banner: {
          js: 'import { createRequire } from "node:module"; const require = createRequire(import.meta.url);',
        },
      });
      return { name: peer.name, path, bytes: (await stat(path)).size };
    }),
  );
  return {
    handlerPath,
    emptyPath: await buildFromSource("empty-handler.mjs", EMPTY_HANDLER),
    handlerBytes: (await stat(handlerPath)).size,
    storeFloorPath: await buildFromSource(
      "store-floor.mjs",
      `export { storeFloor as handler } from "${floors}";\n`,
    ),
    verifyingFloorPath: await buildFromSource(
      "verifying-floor.mjs",
      `export { verifyingFloor as handler } from "${floors}";\n`,
    ),
    unorderedFloorPath: await buildFromSource(
      "unordered-floor.mjs",
      `export { unorderedFloor as handler } from "${floors}";\n`,
    ),
    leverVariants,
    peers,
  };
}

function benchPath(file: string): string {
  return fileURLToPath(new URL(file, BENCH_DIST));
}

/** A bundle of `contents` (imports relative to the project root), built as the handler is. */
async function buildFromSource(file: string, contents: string, options: BuildOptions = {}): Promise<string> {
  const outfile = benchPath(file);
  await build({
    ...esbuildOptions(),
    ...options,
    stdin: { contents, loader: "ts", sourcefile: file.replace(/\.mjs$/, ".ts"), resolveDir: PROJECT_ROOT },
    outfile,
    logLevel: "warning",
  });
  return outfile;
}

async function buildVariant(
  file: string,
  overrides: ModuleOverride[],
  options: BuildOptions = {},
): Promise<string> {
  const outfile = benchPath(file);
  const unused = new Set(overrides.map((override) => join(PROJECT_ROOT, override.module)));
  await build({
    ...esbuildOptions(),
    entryPoints: [HANDLER_ENTRY],
    outfile,
    sourcemap: false,
    logLevel: "warning",
    ...options,
    plugins: [overridePlugin(overrides, unused)],
  });
  // A module renamed or no longer imported would leave the variant the same as the shipped bundle.
  if (unused.size > 0) throw new Error(`${file}: nothing imports ${[...unused].join(", ")} to override`);
  return outfile;
}

/** Every import of an overridden module resolves to its wrapper, except the wrapper's own. */
function overridePlugin(overrides: ModuleOverride[], unused: Set<string>): Plugin {
  const byPath = new Map(overrides.map((override) => [join(PROJECT_ROOT, override.module), override]));
  return {
    name: "bench-module-override",
    setup(pluginBuild) {
      pluginBuild.onResolve({ filter: /^\./ }, async (args) => {
        if (args.pluginData === "original") return undefined;
        const resolved = await pluginBuild.resolve(args.path, {
          kind: args.kind,
          resolveDir: args.resolveDir,
          importer: args.importer,
          pluginData: "original",
        });
        if (!byPath.has(resolved.path)) return undefined;
        unused.delete(resolved.path);
        return { path: resolved.path, namespace: "bench-override" };
      });
      pluginBuild.onLoad({ filter: /.*/, namespace: "bench-override" }, (args) => {
        const override = byPath.get(args.path);
        if (override === undefined) return undefined;
        const original = JSON.stringify(args.path);
        return {
          contents: `import * as original from ${original};\nexport * from ${original};\n${override.exports}`,
          loader: "js",
          resolveDir: PROJECT_ROOT,
          pluginData: "original",
        };
      });
    },
  };
}
