/**
 * Supply chain: the function ships only the packages package.json declares as dependencies, each pinned
 * exactly (aws-jwt-verify for the token check, issue 46), and the bundle holds only the function's code and
 * theirs. tools/audit-shipped.ts checks them for known advisories in CI; this test makes a new one a
 * deliberate change.
 */
import { readFileSync } from "node:fs";
import { build, type Metafile } from "esbuild";
import { describe, expect, test } from "vitest";
import { handlerBundleOptions } from "../../tools/bundle-options.ts";

describe("production dependencies", () => {
  test("package.json declares them at exact versions, and the lock file installs every other package as a dev one", () => {
    const manifest = JSON.parse(readFileSync("package.json", "utf8")) as {
      dependencies?: Record<string, string>;
      optionalDependencies?: Record<string, string>;
      peerDependencies?: Record<string, string>;
    };
    const declared = manifest.dependencies ?? {};
    for (const version of Object.values(declared)) expect(version).toMatch(/^\d+\.\d+\.\d+$/);
    expect(manifest.optionalDependencies ?? {}).toEqual({});
    expect(manifest.peerDependencies ?? {}).toEqual({});

    const lock = JSON.parse(readFileSync("package-lock.json", "utf8")) as {
      packages: Record<string, { dev?: boolean; devOptional?: boolean; dependencies?: object }>;
    };
    expect(lock.packages[""]?.dependencies ?? {}).toEqual(declared);
    const installed = Object.entries(lock.packages).filter(([path]) => path !== "");
    expect(installed.length).toBeGreaterThan(0);
    const shipped = installed.filter(([, entry]) => !entry.dev && !entry.devOptional);
    expect(shipped.map(([path]) => path).sort()).toEqual(
      Object.keys(declared)
        .map((name) => `node_modules/${name}`)
        .sort(),
    );
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
    const declared = Object.keys(
      (JSON.parse(readFileSync("package.json", "utf8")) as { dependencies?: object }).dependencies ?? {},
    );
    const ours = (input: string) =>
      input.startsWith("lambda/") || declared.some((name) => input.startsWith(`node_modules/${name}/`));
    expect(inputs.filter((input) => !ours(input))).toEqual([]);
    expect(inputs.filter((input) => /^lambda\/.*\.test\./.test(input))).toEqual([]);

    // Its own Node modules are the sockets its HTTP client opens (node:net, node:tls) and node:crypto (SigV4),
    // loaded on first use with process.getBuiltinModule; node:crypto for the key set's keys and node:http's
    // agent for an http:// issuer (aws-jwt-verify imports crypto, https and stream by their bare names at
    // import anyway); node:async_hooks for the request's call timings; and, in the traces' chunk that only a
    // sampled invocation loads, node:async_hooks and node:dgram: no AWS SDK, no jose, no ajv runtime, no
    // tracing SDK.
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
      "import-statement node:async_hooks",
      "import-statement node:async_hooks (traces)",
      "import-statement node:crypto",
      "import-statement node:dgram (traces)",
      "import-statement node:http",
    ]);
    expect(code).not.toMatch(
      /@aws-sdk|aws-xray-sdk|@opentelemetry|require\(["']https?["']\)|ajv\/dist\/runtime|from"jose"/,
    );
    // The AWS SDK alone is ~500 KB; the function is a few tens of KB.
    expect(code.length).toBeLessThan(100 * 1024);
  });
});
