/**
 * Every bundle the bench measures, each built with the handler's esbuild options from a typed entry file
 * (bench/entries/, bench/peers/), so that tsc checks every variant: the shipped handler, the handler
 * without each cold-start lever (lambda/dependencies.ts's ColdStartLevers), the floors and the peers.
 */
import { mkdir, stat } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { type BuildOptions, build } from "esbuild";
import { buildBundleWithSize } from "../tools/build-bundle.ts";
import {
  esbuildOptions,
  HANDLER_ENTRY,
  HANDLER_FILE,
  handlerBundleOptions,
  REQUIRE_BANNER,
} from "../tools/bundle-options.ts";

const BENCH_DIST = new URL("../dist/bench/", import.meta.url);

/**
 * The handler without one of the cold-start levers: the bench measures each against the shipped one,
 * with the issuer's key set delivered (JWKS_JSON) as it ships. Key prefetch (`prefetchKeys`) has no
 * variant: with the keys delivered the function fetches nothing at init, so it is moot; the handler
 * without delivered keys (the same bundle, fetching at cold start) is a row of its own.
 */
export interface LeverVariant {
  name: string;
  /** Its entry file, relative to bench/. */
  entry: string;
  /** Whether the store's connection is still opened at init: the cold path's network model needs it. */
  storePrewarmed: boolean;
}

export const LEVER_VARIANTS: LeverVariant[] = [
  { name: "without store prewarm", entry: "./entries/without-store-prewarm.ts", storePrewarmed: false },
];

/** V8's explicit compile hint: every function of the file compiled eagerly, at load (Node 22+). */
export const EAGER_COMPILE_HINT = "//# allFunctionsCalledOnLoad";

/** Bundle-level levers: the shipped bundle built with other esbuild options, measured beside it. */
export const BUNDLE_LEVERS: { name: string; options: BuildOptions }[] = [
  {
    name: "with eager compile hint",
    options: { banner: { js: `${EAGER_COMPILE_HINT}\n${REQUIRE_BANNER}` } },
  },
];

/**
 * The peers the README's claims about the AWS SDK rest on (bench/peers/): the same create written with
 * each client, bundled for Node as a team would deploy it (no "browser" condition).
 */
export const PEERS = [
  { name: "peer: AWS SDK v3 DynamoDBClient", entry: "./peers/aws-sdk-v3.ts", file: "peer-aws-sdk-v3.mjs" },
  { name: "peer: aws-lite DynamoDB", entry: "./peers/aws-lite.ts", file: "peer-aws-lite.mjs" },
] as const;

export interface BenchBundles {
  /** The deployable bundle built into dist/bench/handler/, so a rebuild elsewhere cannot change it mid-run. */
  handlerPath: string;
  /** The empty handler, built with the same options: the floor a cold start is compared with. */
  emptyPath: string;
  /** What a cold start imports of the deployable bundle: its entry and static chunks, no source map. */
  handlerBytes: number;
  /** bench/floor-handlers.ts's floors, each built as its own bundle with the same options. */
  storeFloorPath: string;
  verifyingFloorPath: string;
  issuerFreeFloorPath: string;
  /** The issuer-free floor with the API's duties (bench/floor-with-duties.ts): information on the cold path. */
  issuerFreeFloorWithDutiesPath: string;
  /** bench/warm-floor.ts, bundled the same way: item 3 runs it beside the handler's bundle. */
  warmFloorPath: string;
  /** The warm floor with the API's duties (bench/floor-with-duties.ts), bundled the same way, for item 3 too. */
  dutiesFloorPath: string;
  /** The handler built without each lever, named as in LEVER_VARIANTS, and with each of BUNDLE_LEVERS. */
  leverVariants: { name: string; path: string; storePrewarmed: boolean }[];
  /** PEERS, built; each with its size. */
  peers: { name: string; path: string; bytes: number }[];
}

export async function buildBenchBundles(): Promise<BenchBundles> {
  await mkdir(BENCH_DIST, { recursive: true });
  const handler = await buildBundleWithSize(benchPath("handler/"));
  const leverVariants = await Promise.all([
    ...LEVER_VARIANTS.map(async (variant, index) => ({
      name: variant.name,
      storePrewarmed: variant.storePrewarmed,
      path: await buildSplitEntry(variant.entry, `handler-lever-variant-${index + 1}/`),
    })),
    ...BUNDLE_LEVERS.map(async (lever, index) => ({
      name: lever.name,
      storePrewarmed: true,
      path: await buildSplitEntry(HANDLER_ENTRY, `handler-bundle-lever-${index + 1}/`, lever.options),
    })),
  ]);
  const peers = await Promise.all(
    PEERS.map(async (peer) => {
      const path = await buildEntry(peer.entry, peer.file, {
        conditions: [],
        sourcemap: false,
        banner: { js: REQUIRE_BANNER },
      });
      return { name: peer.name, path, bytes: (await stat(path)).size };
    }),
  );
  return {
    handlerPath: handler.path,
    emptyPath: await buildEntry("./entries/empty-handler.ts", "empty-handler.mjs"),
    handlerBytes: handler.eagerBytes,
    storeFloorPath: await buildEntry("./entries/store-floor.ts", "store-floor.mjs"),
    verifyingFloorPath: await buildEntry("./entries/verifying-floor.ts", "verifying-floor.mjs"),
    issuerFreeFloorPath: await buildEntry("./entries/issuer-free-floor.ts", "issuer-free-floor.mjs"),
    issuerFreeFloorWithDutiesPath: await buildEntry(
      "./entries/issuer-free-floor-with-duties.ts",
      "issuer-free-floor-with-duties.mjs",
    ),
    warmFloorPath: await buildEntry("./warm-floor.ts", "warm-floor.mjs"),
    dutiesFloorPath: await buildEntry("./entries/warm-floor-with-duties.ts", "warm-floor-with-duties.mjs"),
    leverVariants,
    peers,
  };
}

function benchPath(file: string): string {
  return fileURLToPath(new URL(file, BENCH_DIST));
}

/**
 * `entry` (a path relative to bench/, or absolute) bundled exactly as the deployable bundle is, its lazy
 * chunks split out (tools/bundle-options.ts), into dist/bench/`directory`; returns its entry file. The
 * handler's variants are built so: inlined, their chunks cost them 0.7 ms of import the shipped one has not.
 */
async function buildSplitEntry(
  entry: string,
  directory: string,
  options: BuildOptions = {},
): Promise<string> {
  const outdir = benchPath(directory);
  await build({
    ...handlerBundleOptions(outdir, fileURLToPath(new URL(entry, import.meta.url))),
    ...options,
  });
  return join(outdir, HANDLER_FILE);
}

/** `entry` (a path relative to bench/, or absolute) bundled as the handler is, into dist/bench/`file`. */
async function buildEntry(entry: string, file: string, options: BuildOptions = {}): Promise<string> {
  const outfile = benchPath(file);
  await build({
    ...esbuildOptions(),
    ...options,
    entryPoints: [fileURLToPath(new URL(entry, import.meta.url))],
    outfile,
  });
  return outfile;
}
