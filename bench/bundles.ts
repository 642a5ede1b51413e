import { copyFile, mkdir, stat } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import { buildBundle } from "../tools/build-bundle.ts";
import { esbuildOptions } from "../tools/bundle-options.ts";

const BENCH_DIST = new URL("../dist/bench/", import.meta.url);
const EMPTY_HANDLER = 'export const handler = async () => ({ statusCode: 200, body: "" });\n';

export interface BenchBundles {
  /** A copy of the deployable bundle, so a rebuild elsewhere cannot change it mid-run. */
  handlerPath: string;
  /** The empty handler, built with the same options: the floor a cold start is compared with. */
  emptyPath: string;
  /** The deployable bundle's size, source map excluded. */
  handlerBytes: number;
}

export async function buildBenchBundles(): Promise<BenchBundles> {
  await mkdir(BENCH_DIST, { recursive: true });
  const shipped = await buildBundle();
  const handlerPath = fileURLToPath(new URL("handler.mjs", BENCH_DIST));
  await copyFile(shipped, handlerPath);
  const emptyPath = fileURLToPath(new URL("empty-handler.mjs", BENCH_DIST));
  await build({
    ...esbuildOptions(),
    stdin: { contents: EMPTY_HANDLER, loader: "ts", sourcefile: "empty-handler.ts" },
    outfile: emptyPath,
    logLevel: "warning",
  });
  return { handlerPath, emptyPath, handlerBytes: (await stat(handlerPath)).size };
}
