/** A store `npm start` cannot open: one line naming the store and the cause, and a non-zero exit. */
import { writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { startLocalRun, tempDataDir } from "../support/local-run.ts";

/** `npm start` that fails to start: its whole output, and its exit code. */
async function failedStart(dataDir: string): Promise<{ output: string; code: number | null }> {
  const command = startLocalRun({ PLANTS_DATA_DIR: dataDir });
  const code = await command.exited;
  return { output: command.output().trim(), code };
}

describe("npm start on a store that cannot be opened", () => {
  it("says so in one line naming the store and the cause, and exits non-zero", async () => {
    const dataDir = await tempDataDir();
    // Where LevelDB keeps its files is a file: every open fails (a fault root's permissions cannot make).
    await writeFile(join(dataDir, "dynamodb"), "not a folder");
    const { output, code } = await failedStart(dataDir);
    expect(code).toBe(1);
    expect(output.split("\n")).toHaveLength(1);
    expect(output).toContain(`the embedded store in ${join(dataDir, "dynamodb")} cannot be opened`);
    expect(output).toMatch(/EEXIST|ENOTDIR|Not a directory/);
  });

  it("says so in one line when the data dir itself is a file", async () => {
    const dataDir = join(await tempDataDir(), "data");
    await writeFile(dataDir, "not a folder");
    const { output, code } = await failedStart(dataDir);
    expect(code).toBe(1);
    expect(output).toBe(
      `npm start failed: cannot use the data dir ${dataDir}: EEXIST: file already exists, mkdir '${dataDir}'`,
    );
  });

  it("names LevelDB's lock when another process holds the store open", async () => {
    const dataDir = await tempDataDir();
    const requireFromDynalite = createRequire(createRequire(import.meta.url).resolve("dynalite"));
    const { Level } = requireFromDynalite("level") as {
      Level: new (location: string) => { open(): Promise<void>; close(): Promise<void> };
    };
    const holder = new Level(join(dataDir, "dynamodb"));
    await holder.open();
    try {
      const { output, code } = await failedStart(dataDir);
      expect(code).toBe(1);
      expect(output.split("\n")).toHaveLength(1);
      expect(output).toMatch(/the embedded store in \S+ cannot be opened: .*lock/i);
    } finally {
      await holder.close();
    }
  });
});
