/**
 * The embedded store's faults, which dynalite would rethrow and so end `npm start`: at start, one line
 * naming the store and the cause, and a non-zero exit; mid-request, a 503 with the server living on.
 */
import { rm, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { join } from "node:path";
import { describe, expect, it, vi } from "vitest";
import { mintLocalToken } from "../../local/local-issuer.ts";
import { FAIL_WRITES_FILE } from "../support/level-write-fault.ts";
import { startLocalRun, startServer, tempDataDir } from "../support/local-run.ts";

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

describe("npm start when a write to the store fails (a full disk)", () => {
  it("answers that request 503 with Retry-After, logs the cause, and serves on; the same request sent again creates it", async () => {
    const dataDir = await tempDataDir();
    const server = await startServer(
      { PLANTS_DATA_DIR: dataDir },
      { nodeArgs: ["--import", "./test/support/level-write-fault.ts"] },
    );
    const token = await mintLocalToken(dataDir);
    const post = () =>
      fetch(`${server.url}/plants`, {
        method: "POST",
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        body: '{"id":1,"name":"Fern"}',
      });

    await writeFile(join(dataDir, FAIL_WRITES_FILE), "");
    const refused = await post();
    expect(refused.status).toBe(503);
    expect(refused.headers.get("retry-after")).toMatch(/^[1-9]\d*$/);
    // The store answered 500: from the function's side the write may have landed, and it says so.
    expect(await refused.json()).toEqual({
      error: 503,
      message: expect.stringMatching(/may have been stored; sending the same request again is safe/),
    });
    // The log line is written before the answer, but the two pipes reach this process in either order.
    await vi.waitFor(() => expect(server.output()).toContain("No space left on device"), { timeout: 10_000 });

    await rm(join(dataDir, FAIL_WRITES_FILE));
    const created = await post();
    expect(created.status).toBe(200);
    expect(await created.json()).toEqual({ name: "Fern" });
    expect(server.child.exitCode).toBeNull();
    expect(await server.stop()).toBe(0);
  });
});
