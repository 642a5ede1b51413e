/**
 * The client build (tools/build-client.ts) packs client/ and the lambda/ modules it reaches, however deep,
 * with their layout kept, and refuses a module that would make the package depend on Node or on anything
 * outside it. Shown on small repositories written to a temp dir; the real package is packed and installed
 * by test/client/package.test.ts.
 */
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildClient, packageModules } from "../../tools/build-client.ts";

let work: string;

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), "plant-store-client-build-test-"));
});
afterAll(async () => {
  await rm(work, { recursive: true, force: true });
});

/** A repository of these files (path → source), in a folder of its own under the test's temp dir. */
async function repository(name: string, files: Record<string, string>): Promise<string> {
  const root = join(work, name);
  for (const [path, source] of Object.entries(files)) {
    await mkdir(dirname(join(root, path)), { recursive: true });
    await writeFile(join(root, path), source);
  }
  return root;
}

const CLIENT_INDEX = `import { twice } from "../lambda/retry/deep.ts";
export { type Shared } from "../lambda/retry/deep.ts";
export const four: number = twice(2);
`;

describe("the client build", () => {
  it("packs the lambda/ modules the client reaches through other lambda/ modules, in their own layout", async () => {
    const root = await repository("transitive", {
      "client/index.ts": CLIENT_INDEX,
      "lambda/retry/deep.ts": `import { ONE, type Unit } from "../one.ts";\nexport type Shared = { n: Unit };\nexport const twice = (n: number): number => n * 2 * ONE;\n`,
      "lambda/one.ts": "export type Unit = number;\nexport const ONE = 1;\n",
      "lambda/unused.ts": 'import { readFileSync } from "node:fs";\nexport const unused = readFileSync;\n',
    });
    expect(await packageModules(root)).toEqual(["client/index.ts", "lambda/one.ts", "lambda/retry/deep.ts"]);

    const outDir = await buildClient(join(work, "transitive-dist"), { root });
    const files = (await readdir(outDir, { recursive: true, encoding: "utf8" })).filter(
      (file) => file.endsWith("ts") || file.endsWith("js"),
    );
    expect(files.sort()).toEqual([
      "client/index.d.ts",
      "index.js",
      "lambda/one.d.ts",
      "lambda/retry/deep.d.ts",
    ]);
    expect(await readFile(join(outDir, "client", "index.d.ts"), "utf8")).toContain(
      'from "../lambda/retry/deep.js"',
    );
    expect(await readFile(join(outDir, "lambda", "retry", "deep.d.ts"), "utf8")).toContain(
      'from "../one.js"',
    );
    const bundle = await readFile(join(outDir, "index.js"), "utf8");
    expect(bundle).not.toMatch(/^\s*import\b/m);
    expect((await import(pathToFileURL(join(outDir, "index.js")).href)).four).toBe(4);
  }, 60_000);

  it.each([
    [
      "a node: module",
      'import { createHash } from "node:crypto";\nexport const hash = createHash;\n',
      /lambda\/retry\/deep\.ts imports node:crypto/,
    ],
    [
      "a node: module's types only",
      'import type { IncomingMessage } from "node:http";\nexport type Message = IncomingMessage;\n',
      /lambda\/retry\/deep\.ts imports node:http/,
    ],
    ["a package", 'export { build } from "esbuild";\n', /lambda\/retry\/deep\.ts imports esbuild/],
    [
      "a file outside client/ and lambda/",
      'export * from "../../types/ambient.ts";\n',
      /lambda\/retry\/deep\.ts imports \.\.\/\.\.\/types\/ambient\.ts \(types\/ambient\.ts\), outside the client package/,
    ],
    [
      "Node's types",
      '/// <reference types="node" />\nexport const ONE = 1;\n',
      /lambda\/retry\/deep\.ts references the types of node/,
    ],
  ])("refuses a lambda/ module the client reaches that imports %s", async (name, deepSource, message) => {
    const slug = `refused-${name.replace(/\W+/g, "-")}`;
    const root = await repository(slug, {
      "client/index.ts": 'export { ONE } from "./middle.ts";\n',
      "client/middle.ts": 'export { ONE } from "../lambda/retry/deep.ts";\n',
      "lambda/retry/deep.ts": deepSource,
      "types/ambient.ts": "export const AMBIENT = 1;\n",
    });
    await expect(packageModules(root)).rejects.toThrow(message);
    await expect(buildClient(join(work, `${slug}-dist`), { root })).rejects.toThrow(message);
  });
});
