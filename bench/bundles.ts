/**
 * Every bundle the bench measures, each built with the deployable bundle's esbuild options
 * (tools/bundle-options.ts) from a typed entry file (bench/entries/, bench/peers/), so that tsc checks
 * every variant: the shipped handler, the handler without each cold-start lever, the floors, the peers.
 */
import { mkdir, stat } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { type BuildOptions, build } from "esbuild";
import {
  eagerBytes,
  esbuildOptions,
  HANDLER_FILE,
  handlerBundleOptions,
  REQUIRE_BANNER,
} from "../tools/bundle-options.ts";

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
  await mkdir(BENCH_DIST, { recursive: true });
  const plain = (name: string, entry: string, options: BuildOptions = {}) =>
    buildOne(name, entry, { ...esbuildOptions(), ...options });
  return Promise.all([
    plain(EMPTY_HANDLER, "./entries/empty-handler.ts"),
    plain(STORE_FLOOR, "./entries/store-floor.ts"),
    plain(ISSUER_FREE_FLOOR, "./entries/issuer-free-floor.ts"),
    buildOne(HANDLER, undefined, handlerBundleOptions(join(BENCH_DIST, "handler"))),
    ...LEVER_VARIANTS.map((variant, index) =>
      buildOne(variant.name, variant.entry, handlerBundleOptions(join(BENCH_DIST, `lever-${index + 1}`))),
    ),
    ...PEERS.map((peer) =>
      plain(peer.name, peer.entry, { conditions: [], sourcemap: false, banner: { js: REQUIRE_BANNER } }),
    ),
  ]);
}

/**
 * `entry` (relative to bench/; none: the options' own) built with `options`: split into an outdir, as the
 * deployable bundle is, or else into one file named after the subject.
 */
async function buildOne(name: string, entry: string | undefined, options: BuildOptions): Promise<Subject> {
  const entryPoint = entry && fileURLToPath(new URL(entry, import.meta.url));
  if (options.outdir !== undefined) {
    const result = await build({ ...options, ...(entryPoint ? { entryPoints: { index: entryPoint } } : {}) });
    const bundlePath = join(options.outdir, HANDLER_FILE);
    const key = Object.keys(result.metafile?.outputs ?? {}).find((file) => bundlePath.endsWith(file));
    const bytes = result.metafile && key ? eagerBytes(result.metafile, key) : (await stat(bundlePath)).size;
    return { name, bundlePath, bytes };
  }
  const bundlePath = join(BENCH_DIST, `${name.replace(/[^a-z0-9]+/gi, "-")}.mjs`);
  await build({ ...options, entryPoints: [entryPoint ?? ""], outfile: bundlePath });
  return { name, bundlePath, bytes: (await stat(bundlePath)).size };
}
