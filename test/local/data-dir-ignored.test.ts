/**
 * A data dir holds a private signing key. Wherever it is, even inside the repository under a name of the
 * user's choosing (PLANTS_DATA_DIR=./.data-b), git does not offer it for a commit and the linter, which
 * `npm test` runs, neither reads it nor prints it.
 */
import { execFile } from "node:child_process";
import { randomUUID } from "node:crypto";
import { readFile, rm } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { signingKeyPath } from "../../local/local-issuer.ts";
import { npmRun, REPO } from "../support/local-run.ts";

const run = promisify(execFile);
const BIOME = join(REPO, "node_modules", ".bin", "biome");
const made: string[] = [];

afterAll(async () => {
  await Promise.all(made.map((dir) => rm(dir, { recursive: true, force: true })));
});

/** A data dir path inside the repository, removed after the file's tests. */
function dataDirInRepository(...segments: string[]): string {
  const dir = join(REPO, ...segments.slice(0, -1), `${segments.at(-1)}-${randomUUID()}`);
  made.push(dir);
  return dir;
}

async function privateKeyOf(dataDir: string): Promise<string> {
  const { d } = JSON.parse(await readFile(signingKeyPath(dataDir), "utf8")) as { d: string };
  expect(d.length).toBeGreaterThan(20);
  return d;
}

async function untrackedIn(dir: string): Promise<string> {
  const { stdout } = await run("git", ["status", "--porcelain", "--untracked-files=all", "--", dir], {
    cwd: REPO,
  });
  return stdout;
}

describe("data dirs inside the repository", () => {
  it("at the top (PLANTS_DATA_DIR=./.data-b) or in a source folder: untracked by git, unread by the linter", async () => {
    const dataDirs = [dataDirInRepository(".data-b"), dataDirInRepository("test", ".data-nested")];
    const keys: string[] = [];
    for (const dataDir of dataDirs) {
      await npmRun("token", [], { PLANTS_DATA_DIR: dataDir });
      keys.push(await privateKeyOf(dataDir));
      expect(await readFile(join(dataDir, ".gitignore"), "utf8")).toMatch(/^\*$/m);
      expect(await untrackedIn(dataDir)).toBe("");
    }
    // One lint of the whole repository, as `npm test` runs it, for both dirs.
    const lint = await run(BIOME, ["check", "."], { cwd: REPO }).catch(
      (error: { stdout: string; stderr: string; code: number }) => error,
    );
    for (const [index, dataDir] of dataDirs.entries()) {
      expect(`${lint.stdout}${lint.stderr}`).not.toContain(keys[index]);
      expect(`${lint.stdout}${lint.stderr}`).not.toContain(dataDir.slice(REPO.length));
    }
  });
});
