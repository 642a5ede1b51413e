/**
 * Every bundle the bench measures, each built with the deployable bundle's esbuild options
 * (tools/bundle-options.ts) from a typed entry file (bench/entries/, bench/peers/), so that tsc checks
 * every variant: the shipped handler, the handler without each cold-start lever, the floors, the peers.
 */
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { type BuildOptions, build } from "esbuild";
import { eagerBytes, esbuildOptions, HANDLER_FILE, handlerBundleOptions } from "../tools/bundle-options.ts";

const BENCH_DIST = fileURLToPath(new URL("../dist/bench/", import.meta.url));

export const EMPTY_HANDLER = "empty handler";
export const STORE_FLOOR = "store floor";
export const ISSUER_FREE_FLOOR = "issuer-free floor";
export const HANDLER = "handler (shipped)";
export const SDK_V3_PEER = "peer: AWS SDK v3";
export const AWS_LITE_PEER = "peer: aws-lite";

/**
 * The handler without one of the cold-start levers (lambda/dependencies.ts's ColdStartLevers), each an
 * entry of bench/entries/, measured at a full core beside the shipped one: what the lever saves.
 */
export const LEVER_VARIANTS = [
  { name: "handler without store prewarm", entry: "./entries/without-store-prewarm.ts" },
];

/** The peers: the same create written with each client, bundled for Node as a team would deploy it. */
const PEERS = [
  { name: SDK_V3_PEER, entry: "./peers/aws-sdk-v3.ts" },
  { name: AWS_LITE_PEER, entry: "./peers/aws-lite.ts" },
];

export interface Subject {
  name: string;
  bundlePath: string;
  /** What a cold start imports of it: its entry file and static chunks, no source map. */
  bytes: number;
}

/** Builds every subject into dist/bench/, so that a rebuild elsewhere cannot change one mid-run. */
export async function buildSubjects(): Promise<Subject[]> {
  const source = (entry: string) => fileURLToPath(new URL(entry, import.meta.url));
  const oneFile = (name: string, entry: string, options: BuildOptions = {}) =>
    built(name, {
      ...esbuildOptions(),
      entryPoints: [source(entry)],
      outfile: join(BENCH_DIST, `${name.replace(/[^a-z0-9]+/gi, "-")}.mjs`),
      ...options,
    });
  return Promise.all([
    oneFile(EMPTY_HANDLER, "./entries/empty-handler.ts"),
    oneFile(STORE_FLOOR, "./entries/store-floor.ts"),
    oneFile(ISSUER_FREE_FLOOR, "./entries/issuer-free-floor.ts"),
    built(HANDLER, handlerBundleOptions(join(BENCH_DIST, "handler"))),
    ...LEVER_VARIANTS.map((variant, index) =>
      built(
        variant.name,
        handlerBundleOptions(join(BENCH_DIST, `lever-${index + 1}`), source(variant.entry)),
      ),
    ),
    ...PEERS.map((peer) => oneFile(peer.name, peer.entry, { conditions: [], sourcemap: false })),
  ]);
}

/** The bundle `options` build: split into an outdir, as the deployable bundle is, or else one file. */
async function built(name: string, options: BuildOptions): Promise<Subject> {
  const { metafile } = await build({ ...options, metafile: true });
  const bundlePath = options.outfile ?? join(options.outdir ?? "", HANDLER_FILE);
  return { name, bundlePath, bytes: eagerBytes(metafile, relative(process.cwd(), bundlePath)) };
}
