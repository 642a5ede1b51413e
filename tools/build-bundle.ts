/** Builds the deployable bundle into dist/handler/index.mjs, exactly as the CDK stack builds it. */
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import { BUNDLE_OPTIONS, HANDLER_ENTRY } from "./bundle-options.ts";

export const BUNDLE_PATH = fileURLToPath(new URL("../dist/handler/index.mjs", import.meta.url));

export async function buildBundle(): Promise<string> {
  await build({
    ...BUNDLE_OPTIONS,
    conditions: [...BUNDLE_OPTIONS.conditions],
    mainFields: [...BUNDLE_OPTIONS.mainFields],
    entryPoints: [HANDLER_ENTRY],
    bundle: true,
    outfile: BUNDLE_PATH,
    logLevel: "warning",
  });
  return BUNDLE_PATH;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  console.log(`built ${await buildBundle()}`);
}
