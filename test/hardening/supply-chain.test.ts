/**
 * Supply chain: the function ships one pinned library and nothing else, and the bundle holds only
 * the function's code and those libraries. Known advisories are checked by tools/audit-shipped.ts in CI.
 */
import { readFileSync } from "node:fs";
import { build, type Metafile } from "esbuild";
import { describe, expect, test } from "vitest";
import { esbuildOptions, HANDLER_ENTRY } from "../../tools/bundle-options.ts";

const SHIPPED_PACKAGES = ["aws-jwt-verify"];

describe("production dependencies", () => {
  test("the shipped dependency tree is the one library alone, pinned, without install scripts", () => {
    const manifest = JSON.parse(readFileSync("package.json", "utf8")) as {
      dependencies: Record<string, string>;
    };
    expect(Object.keys(manifest.dependencies).sort()).toEqual(SHIPPED_PACKAGES);
    for (const version of Object.values(manifest.dependencies)) expect(version).toMatch(/^\d+\.\d+\.\d+$/);

    const lock = JSON.parse(readFileSync("package-lock.json", "utf8")) as {
      packages: Record<
        string,
        { dev?: boolean; devOptional?: boolean; hasInstallScript?: boolean; version: string }
      >;
    };
    const shipped = Object.entries(lock.packages).filter(
      ([path, entry]) => path !== "" && !entry.dev && !entry.devOptional,
    );
    expect(shipped.map(([path]) => path).sort()).toEqual(
      SHIPPED_PACKAGES.map((name) => `node_modules/${name}`),
    );
    for (const [path, entry] of shipped) {
      expect(entry.hasInstallScript, path).toBeFalsy();
      expect(entry.version).toBe(manifest.dependencies[path.replace("node_modules/", "")]);
    }
  });
});

describe("the bundle", () => {
  async function bundleMetafile(): Promise<{ metafile: Metafile; code: string }> {
    const result = await build({
      ...esbuildOptions(),
      entryPoints: [HANDLER_ENTRY],
      write: false,
      metafile: true,
      outdir: "dist/supply-chain-check",
      logLevel: "silent",
    });
    const code = result.outputFiles.find((file) => file.path.endsWith(".js"))?.text ?? "";
    return { metafile: result.metafile, code };
  }

  test("holds only lambda/ and the shipped library, in its WebCrypto build", async () => {
    const { metafile, code } = await bundleMetafile();
    const inputs = Object.keys(metafile.inputs);
    const allowed = /^(lambda\/|node_modules\/aws-jwt-verify\/)/;
    expect(inputs.filter((input) => !allowed.test(input))).toEqual([]);
    expect(inputs.filter((input) => /^lambda\/.*\.test\.|^test\//.test(input))).toEqual([]);
    // The node:https build of aws-jwt-verify is not what ships.
    expect(inputs.filter((input) => /node-web-compat-node|https-node/.test(input))).toEqual([]);

    // Its only imports are Node's HTTP clients and node:crypto for SigV4, all loaded on first
    // use (test/infra/bundling.test.ts checks that importing the bundle loads no node:crypto): no AWS
    // SDK, no jose, no ajv runtime.
    const imports = Object.values(metafile.outputs).flatMap((output) => output.imports);
    expect(imports.map(({ path, kind }) => `${kind} ${path}`).sort()).toEqual([
      "dynamic-import node:crypto",
      "dynamic-import node:http",
      "dynamic-import node:https",
    ]);
    expect(code).not.toMatch(/@aws-sdk|require\(["']https?["']\)|ajv\/dist\/runtime|from"jose"/);
    // The AWS SDK alone is ~500 KB; the function is a few tens of KB.
    expect(code.length).toBeLessThan(100 * 1024);
  });
});
