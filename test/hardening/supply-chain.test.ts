/**
 * Supply chain: the function ships only the packages package.json declares as dependencies, each pinned
 * exactly, and the bundle holds only the function's code and theirs. tools/audit-shipped.ts checks them
 * for known advisories in CI; this test makes a new one, or a range, a deliberate change.
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
const declared = Object.keys(manifest.dependencies ?? {});

describe("production dependencies", () => {
  test("are declared at exact versions, and the lock file installs nothing else outside the dev ones", () => {
    for (const [name, version] of Object.entries(manifest.dependencies ?? {})) {
      expect(version, name).toMatch(/^\d+\.\d+\.\d+$/);
    }
    expect(manifest.optionalDependencies ?? {}).toEqual({});
    expect(manifest.peerDependencies ?? {}).toEqual({});

    const lock = JSON.parse(readFileSync("package-lock.json", "utf8")) as {
      packages: Record<string, { dev?: boolean; devOptional?: boolean; dependencies?: object }>;
    };
    expect(lock.packages[""]?.dependencies ?? {}).toEqual(manifest.dependencies ?? {});
    const shipped = Object.entries(lock.packages).filter(
      ([path, entry]) => path !== "" && !entry.dev && !entry.devOptional,
    );
    // The declared packages and, nested under them, what they depend on.
    const outside = shipped.filter(
      ([path]) => !declared.some((name) => path.startsWith(`node_modules/${name}`)),
    );
    expect(outside.map(([path]) => path)).toEqual([]);
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

  test("holds only lambda/ and the declared packages, no test code", async () => {
    const { metafile, code } = await bundleMetafile();
    const inputs = Object.keys(metafile.inputs);
    const ours = (input: string) =>
      input.startsWith("lambda/") || declared.some((name) => input.startsWith(`node_modules/${name}/`));
    expect(inputs.filter((input) => !ours(input))).toEqual([]);
    expect(inputs.filter((input) => /^lambda\/.*\.test\./.test(input))).toEqual([]);
    expect(code).not.toMatch(/@aws-sdk|aws-xray-sdk|@opentelemetry|ajv\/dist\/runtime|from"jose"/);
    // The AWS SDK alone is ~500 KB; the function is a few tens of KB.
    expect(code.length).toBeLessThan(100 * 1024);
  });
});
