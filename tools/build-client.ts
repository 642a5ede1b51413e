/**
 * Builds the client package (client/package.json) into `<outDir>` (client/dist by default), self-contained:
 * the client's sources and what it shares with the function (lambda/request/lossless-json.ts, the retry
 * quota of lambda/store/retry.ts) are copied into a staging dir with their imports made local, then
 * - index.js: one ES module bundled by esbuild, for Node 20+ and browsers, importing nothing;
 * - *.d.ts: the declarations tsc emits from the staged sources (shared/ for the function's modules),
 *   whose imports all stay inside the package.
 * `npm run build` (or `npm pack`, through prepack) in client/ runs it.
 */

import { execFile } from "node:child_process";
import { cp, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { build } from "esbuild";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
export const CLIENT_DIR = join(ROOT, "client");
export const CLIENT_DIST_DIR = join(CLIENT_DIR, "dist");

/** The function's modules the client imports, and where the staged client finds them. */
const SHARED_MODULES = new Map([
  ["../lambda/request/lossless-json.ts", "lambda/request/lossless-json.ts"],
  ["../lambda/store/retry.ts", "lambda/store/retry.ts"],
]);

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

export async function buildClient(outDir = CLIENT_DIST_DIR): Promise<string> {
  const stage = await mkdtemp(join(tmpdir(), "plant-store-client-build-"));
  try {
    const sources = join(stage, "src");
    await stageSources(sources);
    await rm(outDir, { recursive: true, force: true });
    await mkdir(outDir, { recursive: true });
    await build({
      entryPoints: [join(sources, "index.ts")],
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
        compilerOptions: { ...DECLARATION_OPTIONS, rootDir: "src", outDir },
        include: ["src"],
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
    await writeFile(path, source.replace(/(from\s+"\.{1,2}\/[^"]+)\.ts"/g, '$1.js"'));
  }
}

/** client/**.ts (but its dist and generated-elsewhere files) and the shared modules, as `<sources>/…`, imports made local. */
async function stageSources(sources: string): Promise<void> {
  const files = await clientSources();
  for (const file of files) {
    let source = await readFile(join(CLIENT_DIR, file), "utf8");
    for (const [specifier, sharedPath] of SHARED_MODULES) {
      const local = relative(
        dirname(join(sources, file)),
        join(sources, "shared", sharedPath.split("/").pop() ?? ""),
      );
      source = source.replaceAll(`"${specifier}"`, `"./${local}"`);
    }
    if (source.includes('"../lambda/'))
      throw new Error(`client/${file} imports a function module the build does not share`);
    await mkdir(dirname(join(sources, file)), { recursive: true });
    await writeFile(join(sources, file), source);
  }
  for (const sharedPath of SHARED_MODULES.values()) {
    await cp(join(ROOT, sharedPath), join(sources, "shared", sharedPath.split("/").pop() ?? ""));
  }
}

/**
 * The client's .ts files, relative to client/. Its dist/ is never entered: another build (a parallel
 * test's `npm pack`) may be rewriting it meanwhile.
 */
async function clientSources(folder = ""): Promise<string[]> {
  const files: string[] = [];
  for (const entry of await readdir(join(CLIENT_DIR, folder), { withFileTypes: true })) {
    const path = folder ? `${folder}/${entry.name}` : entry.name;
    if (entry.isDirectory() && entry.name !== "dist" && entry.name !== "node_modules") {
      files.push(...(await clientSources(path)));
    } else if (entry.isFile() && entry.name.endsWith(".ts")) files.push(path);
  }
  return files;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  console.log(`built ${await buildClient()}`);
}
