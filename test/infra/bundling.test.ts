import { OutputFormat } from "aws-cdk-lib/aws-lambda-nodejs";
import { describe, expect, it } from "vitest";
import { bundlingFromBundleOptions } from "../../infra/bundling.ts";
import { BUNDLE_OPTIONS } from "../../tools/bundle-options.ts";

describe("bundlingFromBundleOptions", () => {
  const bundling = bundlingFromBundleOptions();

  it("maps every shared bundle option onto NodejsFunction's bundling", () => {
    expect(bundling).toEqual({
      format: OutputFormat.ESM,
      minify: BUNDLE_OPTIONS.minify,
      sourceMap: BUNDLE_OPTIONS.sourcemap,
      sourcesContent: BUNDLE_OPTIONS.sourcesContent,
      target: BUNDLE_OPTIONS.target,
      mainFields: BUNDLE_OPTIONS.mainFields,
      inject: BUNDLE_OPTIONS.inject,
      esbuildArgs: { "--conditions": BUNDLE_OPTIONS.conditions.join(",") },
      externalModules: [],
    });
  });

  it("passes the browser condition, minifies, and maps sources without embedding them", () => {
    expect(bundling.esbuildArgs).toEqual({ "--conditions": "browser" });
    expect(bundling).toMatchObject({ minify: true, sourceMap: true, sourcesContent: false });
  });

  it("bundles every dependency", () => {
    expect(bundling.externalModules).toEqual([]);
  });
});
