import { fileURLToPath } from "node:url";
import type { BuildOptions } from "esbuild";

/**
 * The one description of the deployable bundle. The CDK stack (NodejsFunction) and the
 * local runner (`tools/build-bundle.ts`) both build from it, so "works locally" means
 * "works deployed".
 */
export const HANDLER_ENTRY = fileURLToPath(new URL("../lambda/handler.ts", import.meta.url));

export const HANDLER_EXPORT = "handler";

/** The bundle's `handlerFor(env)`: a handler instance for an environment, as the local run builds them. */
export const HANDLER_FACTORY_EXPORT = "handlerFor";

export const BUNDLE_OPTIONS = {
  format: "esm",
  platform: "node",
  // The lowest Node the bundle runs on: developers' machines (20). Lambda runs a newer one.
  target: "node20",
  minify: true,
  sourcemap: true,
  sourcesContent: false,
  mainFields: ["module", "main"],
  // esbuild's list of what it wrote is noise in `cdk synth`, `npm start` and the tests; its warnings are not.
  logLevel: "warning",
} as const;

/** BUNDLE_OPTIONS as esbuild's build() takes them (fresh, mutable arrays). */
export function esbuildOptions(): BuildOptions {
  return {
    ...BUNDLE_OPTIONS,
    mainFields: [...BUNDLE_OPTIONS.mainFields],
    bundle: true,
  };
}
