/**
 * Supply chain: the function ships only the packages package.json declares as `dependencies`, each at an
 * exact version, and the bundle holds only the function's code and theirs. tools/audit-shipped.ts checks
 * those packages for known advisories in CI; this test makes a new one a deliberate change.
 */
import { readFileSync } from "node:fs";
import { build, type Metafile } from "esbuild";
import { describe, expect, test } from "vitest";
import { handlerBundleOptions } from "../../tools/bundle-options.ts";

const manifest = JSON.parse(readFileSync("package.json", "utf8")) as {
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
};
const shippedPackages = Object.keys(manifest.dependencies ?? {});

describe("production dependencies", () => {
  test("are pinned to exact versions, with no optional or peer ones", () => {
    for (const [name, version] of Object.entries(manifest.dependencies ?? {})) {
      expect(version, name).toMatch(/^\d+\.\d+\.\d+$/);
    }
    expect(manifest.optionalDependencies ?? {}).toEqual({});
    expect(manifest.peerDependencies ?? {}).toEqual({});
  });
});

describe("the bundle", () => {
  async function bundleMetafile(): Promise<{ metafile: Metafile; code: string }> {
    const result = await build({
      ...handlerBundleOptions("dist/supply-chain-check"),
      write: false,
      logLevel: "silent",
    });
    const code = result.outputFiles
      .filter((file) => file.path.endsWith(".mjs"))
      .map((file) => file.text)
      .join("\n");
    return { metafile: result.metafile ?? { inputs: {}, outputs: {} }, code };
  }

  test("holds only lambda/ and the declared dependencies, no test code and no AWS SDK", async () => {
    const { metafile, code } = await bundleMetafile();
    const inputs = Object.keys(metafile.inputs);
    const packageOf = (input: string) => /^node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(input)?.[1];
    expect(inputs.filter((input) => !input.startsWith("lambda/") && packageOf(input) === undefined)).toEqual(
      [],
    );
    expect(inputs.filter((input) => /^lambda\/.*\.test\./.test(input))).toEqual([]);
    const bundled = new Set(inputs.map(packageOf).filter((name) => name !== undefined));
    expect([...bundled].filter((name) => !shippedPackages.includes(name))).toEqual([]);
    expect(code).not.toMatch(/@aws-sdk|aws-xray-sdk|@opentelemetry|ajv\/dist\/runtime|from"jose"/);
    // The AWS SDK alone is ~500 KB; the function is a few tens of KB.
    expect(code.length).toBeLessThan(100 * 1024);
  });
});
