/**
 * Supply chain: the function ships no third-party package (its token check and SigV4 are its own code on
 * node:crypto), and the bundle holds only the function's code. Should a production dependency come back,
 * tools/audit-shipped.ts checks it for known advisories in CI, and this test makes it a deliberate change.
 */
import { readFileSync } from "node:fs";
import { build, type Metafile } from "esbuild";
import { describe, expect, test } from "vitest";
import { esbuildOptions, HANDLER_ENTRY } from "../../tools/bundle-options.ts";

describe("production dependencies", () => {
  test("there are none: package.json declares none, and the lock file installs every package as a dev one", () => {
    const manifest = JSON.parse(readFileSync("package.json", "utf8")) as {
      dependencies?: Record<string, string>;
      optionalDependencies?: Record<string, string>;
      peerDependencies?: Record<string, string>;
    };
    expect(manifest.dependencies ?? {}).toEqual({});
    expect(manifest.optionalDependencies ?? {}).toEqual({});
    expect(manifest.peerDependencies ?? {}).toEqual({});

    const lock = JSON.parse(readFileSync("package-lock.json", "utf8")) as {
      packages: Record<string, { dev?: boolean; devOptional?: boolean; dependencies?: object }>;
    };
    expect(lock.packages[""]?.dependencies ?? {}).toEqual({});
    const installed = Object.entries(lock.packages).filter(([path]) => path !== "");
    expect(installed.length).toBeGreaterThan(0);
    const shipped = installed.filter(([, entry]) => !entry.dev && !entry.devOptional);
    expect(shipped.map(([path]) => path)).toEqual([]);
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

  test("holds only lambda/, no package and no test code", async () => {
    const { metafile, code } = await bundleMetafile();
    const inputs = Object.keys(metafile.inputs);
    expect(inputs.filter((input) => !input.startsWith("lambda/"))).toEqual([]);
    expect(inputs.filter((input) => /^lambda\/.*\.test\./.test(input))).toEqual([]);

    // Its only imports are Node's HTTP clients, node:crypto (SigV4, and the token's signature) and, for the
    // traces of sampled requests, node:async_hooks and node:dgram, all loaded on first use
    // (test/infra/bundling.test.ts checks that importing the bundle loads no node:crypto): no AWS SDK, no
    // jose, no ajv runtime, no tracing SDK.
    const imports = Object.values(metafile.outputs).flatMap((output) => output.imports);
    expect([...new Set(imports.map(({ path, kind }) => `${kind} ${path}`))].sort()).toEqual([
      "dynamic-import node:async_hooks",
      "dynamic-import node:crypto",
      "dynamic-import node:dgram",
      "dynamic-import node:http",
      "dynamic-import node:https",
    ]);
    expect(code).not.toMatch(
      /@aws-sdk|aws-xray-sdk|@opentelemetry|require\(["']https?["']\)|ajv\/dist\/runtime|from"jose"/,
    );
    // The AWS SDK alone is ~500 KB; the function is a few tens of KB.
    expect(code.length).toBeLessThan(100 * 1024);
  });
});
