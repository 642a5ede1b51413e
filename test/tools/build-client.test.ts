/**
 * The client build (tools/build-client.ts) packs client/index.ts and the client/ modules it reaches, and
 * refuses a module that would make the package depend on Node, on a package, or on anything outside
 * client/ (the function's modules included). Of the real client it ships only the public declarations,
 * two builds are byte for byte the same, and the minified module for pages stays within its size budget.
 * The real package is also packed and installed by test/client/package.test.ts.
 */
import { mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { gzipSync } from "node:zlib";
import ts from "typescript";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  buildClient,
  GZIPPED_BUDGET_BYTES,
  MINIFIED_BUDGET_BYTES,
  packageModules,
} from "../../tools/build-client.ts";

/** The package's whole public surface: every name its declarations export (the types openapi-typescript generates among them). */
const PUBLIC_NAMES = [
  "$defs",
  "operations",
  "webhooks",
  "BearerToken",
  "ClientCredentials",
  "Clock",
  "components",
  "createPlantStoreClient",
  "Credentials",
  "DEFAULT_RETRY_POLICY",
  "ExactNewPlant",
  "FetchFunction",
  "INT64_MAX",
  "INT64_MIN",
  "MAX_ANSWER_BYTES",
  "NewPlant",
  "paths",
  "Plant",
  "PlantIdInput",
  "plantIdFrom",
  "PlantStoreClient",
  "PlantStoreClientOptions",
  "PlantStoreError",
  "PlantStoreErrorDetails",
  "PlantStoreErrorKind",
  "RETRYABLE_STATUSES",
  "RetryOptions",
  "systemClock",
  "TokenEndpointError",
  "TokenFunctionResult",
];

const REPO = fileURLToPath(new URL("../../", import.meta.url));
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

/** Every file of a build, by its path in it, with its content. */
async function filesOf(dir: string): Promise<Map<string, string>> {
  const names = (await readdir(dir, { recursive: true, withFileTypes: true }))
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name).slice(dir.length + 1));
  return new Map(
    await Promise.all(
      names.sort().map(async (name) => [name, await readFile(join(dir, name), "utf8")] as const),
    ),
  );
}

/** The names a declaration file exports, as the compiler reads it. */
function exportedNames(source: string): string[] {
  const file = ts.createSourceFile("x.d.ts", source, ts.ScriptTarget.ES2022, false);
  const names: string[] = [];
  for (const statement of file.statements) {
    if (ts.isExportDeclaration(statement)) {
      if (statement.exportClause && ts.isNamedExports(statement.exportClause))
        for (const element of statement.exportClause.elements) names.push(element.name.text);
      continue;
    }
    const exported = ts.canHaveModifiers(statement)
      ? ts.getModifiers(statement)?.some((modifier) => modifier.kind === ts.SyntaxKind.ExportKeyword)
      : false;
    if (!exported) continue;
    if (ts.isVariableStatement(statement)) {
      for (const declaration of statement.declarationList.declarations)
        names.push(declaration.name.getText(file));
    } else if ("name" in statement && statement.name && ts.isIdentifier(statement.name as ts.Node)) {
      names.push((statement.name as ts.Identifier).text);
    }
  }
  return names;
}

describe("the client build, on small repositories", () => {
  it("packs client/index.ts and the client/ modules it reaches, however deep, and no other", async () => {
    const root = await repository("transitive", {
      "client/index.ts":
        'import { twice } from "./deep/twice.ts";\nexport { type Shared } from "./deep/twice.ts";\nexport const four: number = twice(2);\n',
      "client/deep/twice.ts":
        'import { ONE, type Unit } from "../one.ts";\nexport type Shared = { n: Unit };\nexport const twice = (n: number): number => n * 2 * ONE;\n',
      "client/one.ts": "export type Unit = number;\nexport const ONE = 1;\n",
      "client/unused.ts": 'import { readFileSync } from "node:fs";\nexport const unused = readFileSync;\n',
    });
    expect(await packageModules(root)).toEqual(["client/deep/twice.ts", "client/index.ts", "client/one.ts"]);

    const outDir = await buildClient(join(work, "transitive-dist"), { root });
    expect([...(await filesOf(outDir)).keys()]).toEqual([
      "deep/twice.d.ts",
      "index.d.ts",
      "index.js",
      "index.min.js",
      "one.d.ts",
    ]);
    expect(await readFile(join(outDir, "index.d.ts"), "utf8")).toContain('from "./deep/twice.js"');
    const bundle = await readFile(join(outDir, "index.js"), "utf8");
    expect(bundle).not.toMatch(/^\s*import\b/m);
    for (const file of ["index.js", "index.min.js"])
      expect((await import(pathToFileURL(join(outDir, file)).href)).four).toBe(4);
  });

  it("leaves out what is marked @internal, and a declaration file no public one reaches", async () => {
    const root = await repository("internal", {
      "client/index.ts":
        'export { ONE } from "./one.ts";\nimport { helper } from "./helper.ts";\nexport const two: number = helper() + 1;\n',
      "client/one.ts":
        "export const ONE = 1;\n/** For the package's own modules. @internal */\nexport const hidden = 2;\n",
      "client/helper.ts": "/** @internal */\nexport function helper(): number {\n  return 1;\n}\n",
    });
    const files = await filesOf(await buildClient(join(work, "internal-dist"), { root }));
    expect([...files.keys()].filter((file) => file.endsWith(".d.ts"))).toEqual(["index.d.ts", "one.d.ts"]);
    expect(exportedNames(files.get("one.d.ts") ?? "")).toEqual(["ONE"]);
  });

  it.each([
    [
      "a node: module",
      'import { createHash } from "node:crypto";\nexport const hash = createHash;\n',
      /client\/deep\.ts imports node:crypto/,
    ],
    [
      "a node: module's types only",
      'import type { IncomingMessage } from "node:http";\nexport type Message = IncomingMessage;\n',
      /client\/deep\.ts imports node:http/,
    ],
    ["a package", 'export { build } from "esbuild";\n', /client\/deep\.ts imports esbuild/],
    [
      "one of the function's modules",
      'export { systemClock } from "../lambda/clock.ts";\n',
      /client\/deep\.ts imports \.\.\/lambda\/clock\.ts \(lambda\/clock\.ts\), outside client\//,
    ],
    [
      "Node's types",
      '/// <reference types="node" />\nexport const ONE = 1;\n',
      /client\/deep\.ts references the types of node/,
    ],
  ])("refuses a client/ module the entry reaches that imports %s", async (name, deepSource, message) => {
    const slug = `refused-${name.replace(/\W+/g, "-")}`;
    const root = await repository(slug, {
      "client/index.ts": 'export { ONE } from "./middle.ts";\n',
      "client/middle.ts": 'export { ONE } from "./deep.ts";\n',
      "client/deep.ts": deepSource,
      "lambda/clock.ts": "export const systemClock = 1;\n",
    });
    await expect(packageModules(root)).rejects.toThrow(message);
    await expect(buildClient(join(work, `${slug}-dist`), { root })).rejects.toThrow(message);
  });
});

describe("the client's package", () => {
  let first: Map<string, string>;
  let second: Map<string, string>;
  beforeAll(async () => {
    first = await filesOf(await buildClient(join(work, "first", "dist")));
    second = await filesOf(await buildClient(join(work, "elsewhere", "second")));
  });

  it("is the same, byte for byte, from two builds into two places, and holds no path of the machine", () => {
    expect([...second.keys()]).toEqual([...first.keys()]);
    for (const [file, content] of first) {
      expect(second.get(file), file).toBe(content);
      for (const machinePath of [work, REPO, tmpdir()]) expect(content, file).not.toContain(machinePath);
    }
  });

  it("rebuilt from the same sources, rewrites no file and removes only what it no longer makes", async () => {
    const dist = join(work, "first", "dist");
    const leftOver = join(dist, "left-over.d.ts");
    await writeFile(leftOver, "export {};\n");
    const before = await inodesOf(dist);
    await buildClient(dist);
    const after = await inodesOf(dist);
    // A file renamed into place has a new inode: an `npm pack` reading beside the build saw none change.
    before.delete("left-over.d.ts");
    expect(after).toEqual(before);
  });

  it("declares only the client's own names: no helper, nothing of the function's", () => {
    const declarations = [...first].filter(([file]) => file.endsWith(".d.ts"));
    const names = declarations.flatMap(([, source]) => exportedNames(source));
    expect([...new Set(names)].sort()).toEqual([...PUBLIC_NAMES].sort());
    for (const [file, source] of declarations) expect(source, file).not.toMatch(/lambda\//);
  });

  it("imports only its own files and its dependencies (exactly those), the page's module not even those", () => {
    for (const [file, source] of first) {
      expect(source, file).not.toMatch(/\brequire\(|\bimport\(/);
      const specifiers = [...source.matchAll(/^\s*(?:import|export)\b[^"';]*?from\s+"([^"]+)"/gm)].map(
        (match) => match[1] ?? "",
      );
      const dependencies = specifiers.filter((specifier) => !specifier.startsWith("."));
      expect(dependencies, file).toEqual(
        file === "index.js" ? ["lossless-json", "openapi-fetch", "lossless-json", "oauth4webapi"] : [],
      );
      // A relative import names a .js file of the package, whose declarations it holds.
      for (const specifier of specifiers.filter((specifier) => specifier.startsWith("."))) {
        const declarations = join(dirname(file), specifier).replace(/\.js$/, ".d.ts");
        expect(first.has(declarations), `${file} imports ${specifier}`).toBe(true);
      }
    }
  });

  it(`has a minified module for pages within ${MINIFIED_BUDGET_BYTES / 1024} KiB (${GZIPPED_BUDGET_BYTES / 1024} KiB gzip), its dependencies bundled in, exporting what the full one does`, async () => {
    const minified = first.get("index.min.js") ?? "";
    expect(Buffer.byteLength(minified)).toBeLessThanOrEqual(MINIFIED_BUDGET_BYTES);
    expect(gzipSync(minified, { level: 9 }).byteLength).toBeLessThanOrEqual(GZIPPED_BUDGET_BYTES);
    // A page resolves no package name: the page's module imports nothing (nor do its minified statements).
    expect(minified).not.toMatch(/\bimport\s*[^(]*?from\s*["']/);
    const dir = join(work, "first", "dist");
    const [full, small] = await Promise.all(
      ["index.js", "index.min.js"].map((file) => import(pathToFileURL(join(dir, file)).href)),
    );
    expect(Object.keys(small).sort()).toEqual(Object.keys(full).sort());
    expect(Object.keys(full).every((name) => PUBLIC_NAMES.includes(name))).toBe(true);
  });
});

/** Each file of `directory` (relative path) with its inode number. */
async function inodesOf(directory: string): Promise<Map<string, number>> {
  const files = (await readdir(directory, { recursive: true })).sort();
  const inodes = new Map<string, number>();
  for (const file of files) {
    const info = await stat(join(directory, file));
    if (info.isFile()) inodes.set(file, info.ino);
  }
  return inodes;
}
