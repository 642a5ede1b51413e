/**
 * Builds the client package (client/package.json) into `<outDir>` (client/dist by default), from
 * client/index.ts and the client/ modules it reaches, and nothing else:
 * - index.js: one ES module bundled by esbuild, for Node and bundlers, importing only the package's
 *   `dependencies` (openapi-fetch, lossless-json, oauth4webapi), which npm installs with it;
 * - index.min.js: the same with its dependencies bundled in, minified, for a page's
 *   `<script type="module">`, which resolves no package name; within MINIFIED_BUDGET_BYTES and
 *   GZIPPED_BUDGET_BYTES (test/tools/build-client.test.ts checks them);
 * - index.d.ts and the declarations it reaches: the client's own types only, since tsc drops every
 *   declaration marked `@internal` (stripInternal), and a declaration file no public one imports is left out.
 * A module that imports a `node:` module, a package other than those dependencies, or a file outside
 * client/ fails the build: the package runs in browsers and ships nothing of the function's. The output
 * holds no path of the machine that built it, so two builds of the same sources are byte for byte the same.
 * `npm run build` (or `npm pack`, through prepack) in client/ runs it.
 */

import { readFile } from "node:fs/promises";
import { join, posix, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import ts from "typescript";
import { writeChanged } from "./build-bundle.ts";

const ROOT = fileURLToPath(new URL("..", import.meta.url));

/** What a page loads with `<script type="module">` may weigh: index.min.js, and gzip-compressed as served. */
export const MINIFIED_BUDGET_BYTES = 56 * 1024;
export const GZIPPED_BUDGET_BYTES = 20 * 1024;
const ENTRY = "client/index.ts";

/** What the client's declarations compile against: its own code, for ES2022 with the web's fetch. */
const DECLARATION_OPTIONS = {
  target: "ES2022",
  // ES modules whatever package.json says (a test's repository may have none); imports name .ts files.
  module: "ES2022",
  moduleResolution: "Bundler",
  allowImportingTsExtensions: true,
  lib: ["ES2023", "ES2024.String", "DOM", "DOM.Iterable"],
  types: [],
  strict: true,
  declaration: true,
  emitDeclarationOnly: true,
  stripInternal: true,
  isolatedModules: true,
  verbatimModuleSyntax: true,
  skipLibCheck: true,
};

/** `root` is the repository the client is read from (a test's copy, say). */
export async function buildClient(
  outDir = join(ROOT, "client", "dist"),
  { root = ROOT } = {},
): Promise<string> {
  const dependencies = await packageDependencies(root);
  const modules = await packageModules(root, dependencies);
  const declarations = declarationsOf(root, modules);
  const outputs = new Map<string, string | Uint8Array>();
  for (const [minify, file] of [
    [false, "index.js"],
    [true, "index.min.js"],
  ] as const) {
    const { outputFiles = [] } = await build({
      // Paths in the bundle's comments are relative to the repository: the same on every machine.
      absWorkingDir: root,
      entryPoints: [ENTRY],
      outfile: join(outDir, file),
      bundle: true,
      format: "esm",
      platform: "neutral",
      target: "es2022",
      minify,
      // The page's module has no npm to install its dependencies: they are bundled into it.
      external: minify ? [] : dependencies,
      legalComments: "none",
      logLevel: "warning",
      write: false,
    });
    for (const { path, contents } of outputFiles) outputs.set(path, contents);
  }
  for (const [file, source] of declarations) outputs.set(join(outDir, file), source);
  await writeChanged(outDir, outputs);
  return outDir;
}

/** The names of the client package's `dependencies` (client/package.json of `root`, if it has one). */
async function packageDependencies(root: string): Promise<string[]> {
  const manifest = JSON.parse(await readFile(join(root, "client", "package.json"), "utf8").catch(() => "{}"));
  return Object.keys(manifest.dependencies ?? {});
}

/**
 * The package's modules, relative to `root`: client/index.ts and the client/ modules it imports, directly
 * or through each other. Throws on an import of anything else but the package's `dependencies`.
 */
export async function packageModules(root = ROOT, dependencies: string[] = []): Promise<string[]> {
  const reached = new Set<string>();
  const pending = [ENTRY];
  for (let file = pending.pop(); file !== undefined; file = pending.pop()) {
    if (reached.has(file)) continue;
    reached.add(file);
    const source = await readFile(join(root, file), "utf8");
    const { importedFiles, typeReferenceDirectives } = ts.preProcessFile(source, true, true);
    for (const { fileName: types } of typeReferenceDirectives) {
      throw new Error(`${file} references the types of ${types}: the client package's types are its own`);
    }
    for (const { fileName: specifier } of importedFiles) {
      if (!dependencies.includes(specifier)) pending.push(packageModuleImported(file, specifier));
    }
  }
  return [...reached].sort();
}

/** The package's module that `file` imports as `specifier`, or an error saying why it cannot be one. */
function packageModuleImported(file: string, specifier: string): string {
  if (!specifier.startsWith("./") && !specifier.startsWith("../")) {
    throw new Error(
      `${file} imports ${specifier}: the client package imports no node: module and no package but its dependencies (client/package.json), so that it runs in browsers`,
    );
  }
  const target = posix.normalize(posix.join(posix.dirname(file), specifier));
  if (!target.startsWith("client/") || target.startsWith("client/dist/")) {
    throw new Error(
      `${file} imports ${specifier} (${target}), outside client/: the package ships the client's own modules only`,
    );
  }
  if (!target.endsWith(".ts")) {
    throw new Error(`${file} imports ${specifier}: the package's modules are imported as .ts files`);
  }
  return target;
}

/**
 * The public declarations, by their path in the package: index.d.ts and those it reaches through imports,
 * with `@internal` declarations dropped. Their specifiers name the .js their types stand for (tsc keeps
 * the sources' `./x.ts`; a consumer resolves `./x.js` to `./x.d.ts` under every module resolution).
 */
function declarationsOf(root: string, modules: string[]): Map<string, string> {
  const clientDir = join(root, "client");
  const { options, errors } = ts.convertCompilerOptionsFromJson(
    { ...DECLARATION_OPTIONS, rootDir: clientDir, outDir: join(clientDir, "dist") },
    root,
  );
  const program = ts.createProgram({
    rootNames: modules.map((file) => join(root, file)),
    options,
  });
  const emitted = new Map<string, string>();
  const result = program.emit(undefined, (path, text) => {
    emitted.set(relative(join(clientDir, "dist"), path).split("\\").join("/"), text);
  });
  const diagnostics = [...errors, ...ts.getPreEmitDiagnostics(program), ...result.diagnostics];
  if (diagnostics.length > 0) {
    const host = {
      getCanonicalFileName: (f: string) => f,
      getCurrentDirectory: () => root,
      getNewLine: () => "\n",
    };
    throw new Error(
      `the client's declarations do not compile:\n${ts.formatDiagnostics(diagnostics, host).slice(0, 4000)}`,
    );
  }
  const shipped = new Map<string, string>();
  const pending = ["index.d.ts"];
  for (let file = pending.pop(); file !== undefined; file = pending.pop()) {
    const source = emitted.get(file);
    if (source === undefined || shipped.has(file)) continue;
    shipped.set(file, source.replace(/((?:from\s+|import\()"\.{1,2}\/[^"]+)\.ts"/g, '$1.js"'));
    for (const { fileName } of ts.preProcessFile(source, true, true).importedFiles) {
      pending.push(posix.normalize(posix.join(posix.dirname(file), fileName.replace(/\.ts$/, ".d.ts"))));
    }
  }
  return shipped;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  console.log(`built ${await buildClient()}`);
}
