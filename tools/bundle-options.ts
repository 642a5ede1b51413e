import { fileURLToPath } from "node:url";
import type { BuildOptions, Metafile } from "esbuild";

/**
 * The one description of the deployable bundle. The CDK stack (infra/handler-code.ts) and the local
 * runner (`tools/build-bundle.ts`) both build from it, so "works locally" means "works deployed".
 */
export const HANDLER_ENTRY = fileURLToPath(new URL("../lambda/handler.ts", import.meta.url));

export const HANDLER_EXPORT = "handler";

/** The bundle's `handlerFor(env)`: a handler instance for an environment, as the local run builds them. */
export const HANDLER_FACTORY_EXPORT = "handlerFor";

/** The deployable bundle's entry file, in its directory; Lambda's handler setting is `index.handler`. */
export const HANDLER_FILE = "index.mjs";

/** A CommonJS package's require() of Node's built-ins (aws4's): an ES module bundle needs a require. */
const REQUIRE_BANNER =
  'import { createRequire } from "node:module"; const require = createRequire(import.meta.url);';

/** The deployable bundle's esbuild options, for a one-file bundle: fresh objects for each build(). */
export function esbuildOptions(): BuildOptions {
  return {
    bundle: true,
    format: "esm",
    banner: { js: REQUIRE_BANNER },
    platform: "node",
    // The lowest Node the bundle runs on: developers' machines (20). Lambda runs a newer one.
    target: "node20",
    minify: true,
    sourcemap: true,
    sourcesContent: false,
    mainFields: ["module", "main"],
    // esbuild's list of what it wrote is noise in `cdk synth`, `npm start` and tests; its warnings are not.
    logLevel: "warning",
  };
}

/**
 * The deployable bundle of `entry` into `outdir`: index.mjs, and in chunks/ the code only some
 * invocations need (the messages of a refused body, lambda/request/schema-refusals.ts), which esbuild splits
 * out at each dynamic import and Node loads at first use. So a cold start imports index.mjs and its static
 * chunks only (eagerBytes). NodejsFunction cannot split (it bundles to one --outfile): the stack deploys
 * this directory with Code.fromAsset.
 */
export function handlerBundleOptions(outdir: string, entry = HANDLER_ENTRY): BuildOptions {
  return {
    ...esbuildOptions(),
    entryPoints: { index: entry },
    outdir,
    splitting: true,
    chunkNames: "chunks/[name]-[hash]",
    outExtension: { ".js": ".mjs" },
    metafile: true,
  };
}

/**
 * The bytes a cold start imports: the entry file and every chunk it imports statically, transitively;
 * chunks reached only by a dynamic import are left out, as are source maps.
 */
export function eagerBytes(metafile: Metafile, entryFile: string): number {
  const seen = new Set<string>();
  const visit = (file: string): number => {
    if (seen.has(file)) return 0;
    seen.add(file);
    const output = metafile.outputs[file];
    if (output === undefined) return 0;
    const staticImports = output.imports.filter((imported) => imported.kind === "import-statement");
    return output.bytes + staticImports.reduce((sum, imported) => sum + visit(imported.path), 0);
  };
  return visit(entryFile);
}
