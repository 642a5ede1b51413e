import { spawnSync } from "node:child_process";
import { readdir, readFile, writeFile } from "node:fs/promises";
import { setTimeout as sleep } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import { claimDataDir, DataDirTakenError, lockPath } from "../../local/data-dir-lock.ts";
import { tempDataDir } from "../support/local-run.ts";

let exitedPid: number | undefined;
/** The pid of a process that has exited: what a crashed `npm start` leaves in its lock. */
function deadPid(): number {
  exitedPid ??= spawnSync(process.execPath, ["-e", ""]).pid;
  if (exitedPid === undefined) throw new Error("could not run node");
  return exitedPid;
}

describe("the data dir's claim", () => {
  it("takes over a lock whose process is gone, or that is not a lock at all", async () => {
    for (const stale of [`${JSON.stringify({ pid: deadPid(), claim: "crashed" })}\n`, "", "garbage"]) {
      const dataDir = await tempDataDir();
      await writeFile(lockPath(dataDir), stale);
      const claim = await claimDataDir(dataDir);
      expect(JSON.parse(await readFile(lockPath(dataDir), "utf8"))).toMatchObject({ pid: process.pid });
      await claim.release();
      expect(await readdir(dataDir)).toEqual([]);
    }
  });

  it("gives a stale lock to exactly one of many claims made at about the same time", async () => {
    // Staggered by up to a few file operations, so that some claims read the stale lock while others
    // have already replaced it: the race a check-then-take-over would lose.
    for (let round = 0; round < 20; round++) {
      const dataDir = await tempDataDir();
      await writeFile(lockPath(dataDir), JSON.stringify({ pid: deadPid(), claim: "crashed" }));
      const outcomes = await Promise.allSettled(
        Array.from({ length: 8 }, (_, index) => sleep(index % 3).then(() => claimDataDir(dataDir))),
      );
      const won = outcomes.flatMap((outcome) => (outcome.status === "fulfilled" ? [outcome.value] : []));
      expect(won, `round ${round}`).toHaveLength(1);
      for (const outcome of outcomes) {
        if (outcome.status === "rejected") expect(outcome.reason).toBeInstanceOf(DataDirTakenError);
      }
      // Nothing is left aside: only the winner's lock.
      expect(await readdir(dataDir)).toEqual(["server.lock"]);
      await won[0]?.release();
    }
  });

  it("refuses a live holder, naming its pid, and is free again once released", async () => {
    const dataDir = await tempDataDir();
    const claim = await claimDataDir(dataDir);
    await expect(claimDataDir(dataDir)).rejects.toThrow(
      `a local API (process ${process.pid}) already serves`,
    );
    await claim.release();
    await (await claimDataDir(dataDir)).release();
  });
});
