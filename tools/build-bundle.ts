/** Builds the deployable bundle into dist/handler/, exactly as the CDK stack builds it. */
import { randomUUID } from "node:crypto";
import { mkdir, readdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import { eagerBytes, HANDLER_FILE, handlerBundleOptions } from "./bundle-options.ts";

export const BUNDLE_DIRECTORY = fileURLToPath(new URL("../dist/handler/", import.meta.url));
export const BUNDLE_PATH = join(BUNDLE_DIRECTORY, HANDLER_FILE);

/** Builds the bundle into `directory` (dist/handler/ by default); returns its entry file. */
export async function buildBundle(directory = BUNDLE_DIRECTORY): Promise<string> {
  return (await buildBundleWithSize(directory)).path;
}

/** buildBundle's, with the bytes a cold start imports: the entry and its static chunks (eagerBytes). */
async function buildBundleWithSize(directory = BUNDLE_DIRECTORY) {
  const options = { ...handlerBundleOptions(directory), metafile: true, write: false } as const;
  const { outputFiles, metafile } = await build(options);
  // A chunk's name holds its hash, so an old entry file never loads a new chunk of another content.
  await writeChanged(directory, new Map(outputFiles.map(({ path, contents }) => [path, contents])));
  const path = join(directory, HANDLER_FILE);
  return { path, eagerBytes: eagerBytes(metafile, relative(process.cwd(), path)) };
}

/**
 * Writes each output (path → content) whose content changed, aside and then renamed into place, and
 * removes the files an earlier build left in `directory` that this one does not make. A process reading
 * them while another rebuilds them (`npm run invoke` beside `npm start`, an `npm pack` beside a test run,
 * parallel tests) reads a whole file, old or new; two builds of the same sources change nothing under
 * each other's feet. The client build (tools/build-client.ts) writes its package with it too.
 */
export async function writeChanged(directory: string, outputs: Map<string, string | Uint8Array>) {
  const made = new Set([...outputs.keys()].map((path) => resolve(path)));
  for (const [path, contents] of outputs) {
    const bytes = typeof contents === "string" ? Buffer.from(contents) : contents;
    const current = await readFile(path).catch(() => undefined);
    if (current?.equals(bytes)) continue;
    await mkdir(dirname(path), { recursive: true });
    const temporary = `${path}.${randomUUID()}.tmp`;
    await writeFile(temporary, bytes);
    await rename(temporary, path);
  }
  for (const entry of await readdir(directory, { recursive: true, withFileTypes: true })) {
    const path = resolve(entry.parentPath, entry.name);
    if (entry.isFile() && !made.has(path) && !entry.name.endsWith(".tmp")) await rm(path, { force: true });
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { path, eagerBytes: bytes } = await buildBundleWithSize();
  console.log(`built ${path} (${(bytes / 1024).toFixed(1)} KiB imported at a cold start)`);
}
