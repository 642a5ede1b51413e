/** Builds the deployable bundle into dist/handler/index.mjs, exactly as the CDK stack builds it. */
import { randomUUID } from "node:crypto";
import { mkdir, rename, writeFile } from "node:fs/promises";
import { dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import { esbuildOptions, HANDLER_ENTRY } from "./bundle-options.ts";

export const BUNDLE_PATH = fileURLToPath(new URL("../dist/handler/index.mjs", import.meta.url));

export async function buildBundle(): Promise<string> {
  const { outputFiles } = await build({
    ...esbuildOptions(),
    entryPoints: [HANDLER_ENTRY],
    outfile: BUNDLE_PATH,
    write: false,
  });
  await mkdir(dirname(BUNDLE_PATH), { recursive: true });
  // Each file is written aside, then renamed into place: a process loading the bundle while another
  // rebuilds it (`npm run invoke` beside `npm start`, parallel tests) reads a whole file, old or new.
  for (const { path, contents } of outputFiles) {
    const temporary = `${path}.${randomUUID()}.tmp`;
    await writeFile(temporary, contents);
    await rename(temporary, path);
  }
  return BUNDLE_PATH;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  console.log(`built ${await buildBundle()}`);
}
