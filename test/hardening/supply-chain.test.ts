/**
 * Supply chain: the function ships no third-party package (its token check and SigV4 are its own code on
 * node:crypto), and the bundle holds only the function's code. Should a production dependency come back,
 * tools/audit-shipped.ts checks it for known advisories in CI, and this test makes it a deliberate change.
 */
import { readFileSync } from "node:fs";
import { build, type Metafile } from "esbuild";
import { describe, expect, test } from "vitest";
import { handlerBundleOptions } from "../../tools/bundle-options.ts";

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

  test("holds only lambda/, no package and no test code", async () => {
    const { metafile, code } = await bundleMetafile();
    const inputs = Object.keys(metafile.inputs);
    expect(inputs.filter((input) => !input.startsWith("lambda/"))).toEqual([]);
    expect(inputs.filter((input) => /^lambda\/.*\.test\./.test(input))).toEqual([]);

    // Its only Node modules are the sockets its HTTP client opens (node:net, node:tls) and node:crypto (SigV4, and the token's signature), all
    // loaded on first use with process.getBuiltinModule (test/infra/bundling.test.ts checks that importing
    // the bundle loads no node:crypto), and, in the traces' chunk that only a sampled invocation loads,
    // node:async_hooks and node:dgram: no AWS SDK, no jose, no ajv runtime, no tracing SDK.
    const nodeImports = Object.entries(metafile.outputs).flatMap(([file, output]) =>
      output.imports
        .filter(({ path }) => path.startsWith("node:"))
        .map(({ path, kind }) => `${kind} ${path}${file.includes("invocation-tracing") ? " (traces)" : ""}`),
    );
    const loadedOnFirstUse = [...code.matchAll(/getBuiltinModule\("([^"]+)"\)/g)].map(
      ([, name]) => `getBuiltinModule ${name}`,
    );
    expect([...new Set([...nodeImports, ...loadedOnFirstUse])].sort()).toEqual([
      "getBuiltinModule node:crypto",
      "getBuiltinModule node:net",
      "getBuiltinModule node:tls",
      "import-statement node:async_hooks (traces)",
      "import-statement node:dgram (traces)",
    ]);
    expect(code).not.toMatch(
      /@aws-sdk|aws-xray-sdk|@opentelemetry|require\(["']https?["']\)|ajv\/dist\/runtime|from"jose"/,
    );
    // The AWS SDK alone is ~500 KB; the function is a few tens of KB.
    expect(code.length).toBeLessThan(100 * 1024);
  });
});
