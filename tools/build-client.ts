/**
 * Builds the client package (client/package.json) into `<outDir>` (client/dist by default), self-contained:
 * client/**.ts and every lambda/ module they reach through relative imports, followed transitively, are
 * copied into a staging dir with their layout kept (client/ and lambda/ side by side, so no import is
 * rewritten), then
 * - index.js: one ES module bundled by esbuild, for Node 20+ and browsers, importing nothing;
 * - client/*.d.ts, lambda/**.d.ts: the declarations tsc emits from the staged sources, whose imports all
 *   stay inside the package.
 * A staged module that imports a `node:` module, a package, or a file outside client/ and lambda/ fails
 * the build: the package must run in browsers and ship with no dependency.
 * `npm run build` (or `npm pack`, through prepack) in client/ runs it.
 */

import { execFile } from "node:child_process";
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join, posix } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { build } from "esbuild";
import ts from "typescript";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const CLIENT_DIR = join(ROOT, "client");
const CLIENT_DIST_DIR = join(CLIENT_DIR, "dist");

/** The folders, relative to the repository, whose modules the package may hold. */
const PACKAGE_FOLDERS = ["client", "lambda"];

/** What the staged sources compile against: the client's own code, for ES2022 with the web's fetch. */
const DECLARATION_OPTIONS = {
  target: "ES2022",
  module: "NodeNext",
  moduleResolution: "NodeNext",
  lib: ["ES2023", "ES2024.String", "DOM", "DOM.Iterable"],
  types: [],
  strict: true,
  declaration: true,
  emitDeclarationOnly: true,
  rewriteRelativeImportExtensions: true,
  isolatedModules: true,
  verbatimModuleSyntax: true,
  skipLibCheck: true,
};

/** `root` is the repository the client and its lambda/ modules are read from (a test's copy, say). */
export async function buildClient(outDir = CLIENT_DIST_DIR, { root = ROOT } = {}): Promise<string> {
  const stage = await mkdtemp(join(tmpdir(), "plant-store-client-build-"));
  try {
    for (const file of await packageModules(root)) {
      await mkdir(dirname(join(stage, file)), { recursive: true });
      await writeFile(join(stage, file), await readFile(join(root, file)));
    }
    await rm(outDir, { recursive: true, force: true });
    await mkdir(outDir, { recursive: true });
    await build({
      entryPoints: [join(stage, "client", "index.ts")],
      outfile: join(outDir, "index.js"),
      bundle: true,
      format: "esm",
      platform: "neutral",
      target: "es2022",
      logLevel: "warning",
    });
    await writeFile(join(stage, "package.json"), '{ "type": "module" }\n');
    await writeFile(
      join(stage, "tsconfig.json"),
      JSON.stringify({
        compilerOptions: { ...DECLARATION_OPTIONS, rootDir: ".", outDir },
        include: PACKAGE_FOLDERS,
      }),
    );
    const tsc = join(ROOT, "node_modules", "typescript", "bin", "tsc");
    await promisify(execFile)(process.execPath, [tsc, "-p", stage]).catch((error: { stdout?: string }) => {
      const output = error.stdout ?? String(error);
      throw new Error(`the client's declarations do not compile:\n${output.slice(0, 4000)}`);
    });
    await useJsSpecifiers(outDir);
    return outDir;
  } finally {
    await rm(stage, { recursive: true, force: true });
  }
}

/**
 * The package's modules, relative to `root`: client/**.ts and the lambda/ modules they import, directly
 * or through each other. Throws on an import of anything else.
 */
export async function packageModules(root = ROOT): Promise<string[]> {
  const reached = new Set<string>();
  const pending = (await clientSources(root)).map((file) => `client/${file}`);
  for (let file = pending.pop(); file !== undefined; file = pending.pop()) {
    if (reached.has(file)) continue;
    reached.add(file);
    const source = await readFile(join(root, file), "utf8");
    const { importedFiles, typeReferenceDirectives } = ts.preProcessFile(source, true, true);
    for (const { fileName: types } of typeReferenceDirectives) {
      throw new Error(`${file} references the types of ${types}: the client package has no dependency`);
    }
    for (const { fileName: specifier } of importedFiles) {
      pending.push(packageModuleImported(file, specifier));
    }
  }
  return [...reached].sort();
}

/** The package's module that `file` imports as `specifier`, or an error saying why it cannot be one. */
function packageModuleImported(file: string, specifier: string): string {
  if (!specifier.startsWith("./") && !specifier.startsWith("../")) {
    throw new Error(
      `${file} imports ${specifier}: the client package imports no node: module and no package, so that it runs in browsers and has no dependency`,
    );
  }
  const target = posix.normalize(posix.join(posix.dirname(file), specifier));
  if (
    !PACKAGE_FOLDERS.some((folder) => target.startsWith(`${folder}/`)) ||
    target.startsWith("client/dist/")
  ) {
    throw new Error(
      `${file} imports ${specifier} (${target}), outside the client package: only client/ and lambda/ modules can be packed`,
    );
  }
  if (!target.endsWith(".ts")) {
    throw new Error(`${file} imports ${specifier}: the package's modules are imported as .ts files`);
  }
  return target;
}

/**
 * tsc keeps the sources' `./x.ts` specifiers in declarations; a consumer resolves `./x.js` to `./x.d.ts`
 * under every module resolution, so the declarations name the .js their types stand for.
 */
async function useJsSpecifiers(outDir: string): Promise<void> {
  const declarations = (await readdir(outDir, { recursive: true, encoding: "utf8" })).filter((file) =>
    file.endsWith(".d.ts"),
  );
  for (const file of declarations) {
    const path = join(outDir, file);
    const source = await readFile(path, "utf8");
    await writeFile(path, source.replace(/((?:from\s+|import\()"\.{1,2}\/[^"]+)\.ts"/g, '$1.js"'));
  }
}

/**
 * The client's .ts files, relative to client/. Its dist/ is never entered: another build (a parallel
 * test's `npm pack`) may be rewriting it meanwhile.
 */
async function clientSources(root: string, folder = ""): Promise<string[]> {
  const files: string[] = [];
  for (const entry of await readdir(join(root, "client", folder), { withFileTypes: true })) {
    const path = folder ? `${folder}/${entry.name}` : entry.name;
    if (entry.isDirectory() && entry.name !== "dist" && entry.name !== "node_modules") {
      files.push(...(await clientSources(root, path)));
    } else if (entry.isFile() && entry.name.endsWith(".ts")) files.push(path);
  }
  return files;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  console.log(`built ${await buildClient()}`);
}
