import { type BundlingOptions, LogLevel, OutputFormat } from "aws-cdk-lib/aws-lambda-nodejs";
import { BUNDLE_OPTIONS } from "../tools/bundle-options.ts";

const OUTPUT_FORMATS = { esm: OutputFormat.ESM, cjs: OutputFormat.CJS } as const;
const LOG_LEVELS = { warning: LogLevel.WARNING } as const;

/** NodejsFunction bundling built from the shared bundle description, so local and deployed bundles match. */
export function bundlingFromBundleOptions(): BundlingOptions {
  return {
    format: OUTPUT_FORMATS[BUNDLE_OPTIONS.format],
    minify: BUNDLE_OPTIONS.minify,
    sourceMap: BUNDLE_OPTIONS.sourcemap,
    sourcesContent: BUNDLE_OPTIONS.sourcesContent,
    target: BUNDLE_OPTIONS.target,
    mainFields: [...BUNDLE_OPTIONS.mainFields],
    logLevel: LOG_LEVELS[BUNDLE_OPTIONS.logLevel],
    // No AWS SDK (lambda/store/sigv4.ts signs, node:http sends), nothing provided by the runtime: bundle everything.
    externalModules: [],
  };
}
