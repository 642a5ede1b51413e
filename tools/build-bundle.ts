/** Builds the deployable bundle into dist/handler/, exactly as the CDK stack builds it. */
import { randomUUID } from "node:crypto";
import { mkdir, readdir, rename, rm, writeFile } from "node:fs/promises";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import { eagerBytes, HANDLER_FILE, handlerBundleOptions } from "./bundle-options.ts";

export const BUNDLE_DIRECTORY = fileURLToPath(new URL("../dist/handler/", import.meta.url));
export const BUNDLE_PATH = join(BUNDLE_DIRECTORY, HANDLER_FILE);

export interface BuiltBundle {
  /** The entry file, index.mjs. */
  path: string;
  /** What a cold start imports: the entry and its static chunks (bundle-options.ts, eagerBytes). */
  eagerBytes: number;
}

/** Builds the bundle into `directory` (dist/handler/ by default); returns its entry file. */
export async function buildBundle(directory = BUNDLE_DIRECTORY): Promise<string> {
  return (await buildBundleWithSize(directory)).path;
}

export async function buildBundleWithSize(directory = BUNDLE_DIRECTORY): Promise<BuiltBundle> {
  const { outputFiles = [], metafile } = await build({ ...handlerBundleOptions(directory), write: false });
  const written = new Set<string>();
  // Each file is written aside, then renamed into place: a process loading the bundle while another
  // rebuilds it (`npm run invoke` beside `npm start`, parallel tests) reads a whole file, old or new. A
  // chunk's name holds its hash, so an old entry file never loads a new chunk of another content.
  for (const { path, contents } of outputFiles) {
    await mkdir(dirname(path), { recursive: true });
    const temporary = `${path}.${randomUUID()}.tmp`;
    await writeFile(temporary, contents);
    await rename(temporary, path);
    written.add(path);
  }
  await removeStaleChunks(join(directory, "chunks"), written);
  const entry = join(directory, HANDLER_FILE);
  const entryKey = relative(process.cwd(), entry);
  return { path: entry, eagerBytes: metafile ? eagerBytes(metafile, entryKey) : 0 };
}

/** Chunks of earlier builds with other content: nothing loads them once the new entry is in place. */
async function removeStaleChunks(chunks: string, written: Set<string>): Promise<void> {
  const names = await readdir(chunks).catch(() => [] as string[]);
  for (const name of names) {
    const path = join(chunks, name);
    if (!written.has(path) && !name.endsWith(".tmp")) await rm(path, { force: true });
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { path, eagerBytes: bytes } = await buildBundleWithSize();
  console.log(`built ${path} (${(bytes / 1024).toFixed(1)} KiB imported at a cold start)`);
}
