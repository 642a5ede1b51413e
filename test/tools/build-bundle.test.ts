/**
 * The bundle build (tools/build-bundle.ts) writes through writeChanged, as the client build does: a
 * rebuild of the same sources rewrites no file (a process importing the bundle beside it reads the same
 * files), removes a chunk of an earlier build, and leaves another build's file still being written.
 */
import { mkdtemp, readdir, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { buildBundle } from "../../tools/build-bundle.ts";

let directory: string;

beforeAll(async () => {
  directory = await mkdtemp(join(tmpdir(), "plant-store-bundle-build-test-"));
});
afterAll(async () => {
  await rm(directory, { recursive: true, force: true });
});

it("rebuilt from the same sources, rewrites no file and removes only what it no longer makes", async () => {
  const entry = await buildBundle(directory);
  const before = (await stat(entry)).ino;
  const stale = join(directory, "chunks", "chunk-STALE.mjs");
  const beingWritten = join(directory, "chunks", "chunk-OTHER.mjs.1234.tmp");
  await writeFile(stale, "export {};\n");
  await writeFile(beingWritten, "export {};\n");
  expect(await buildBundle(directory)).toBe(entry);
  expect((await stat(entry)).ino).toBe(before);
  const chunks = await readdir(join(directory, "chunks"));
  expect(chunks).not.toContain("chunk-STALE.mjs");
  expect(chunks).toContain("chunk-OTHER.mjs.1234.tmp");
});
