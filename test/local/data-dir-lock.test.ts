import { spawnSync } from "node:child_process";
import { createHash, randomUUID } from "node:crypto";
import { readdir, readFile, writeFile } from "node:fs/promises";
import { hostname } from "node:os";
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

  describe("a lock written where its pid means another process", () => {
    const ownLock = async () => {
      const dataDir = await tempDataDir();
      const claim = await claimDataDir(dataDir);
      const own = JSON.parse(await readFile(lockPath(dataDir), "utf8")) as Record<string, unknown>;
      await claim.release();
      return { dataDir, own };
    };

    it("names this process's host, boot and PID namespace in its own lock", async () => {
      const { own } = await ownLock();
      expect(own).toMatchObject({ pid: process.pid, host: hostname() });
      if (process.platform === "linux") {
        expect(own.boot).toMatch(/^[0-9a-f-]{36}$/);
        expect(own.pidNamespace).toMatch(/^pid:\[\d+\]$/);
      }
    });

    const onLinux = process.platform === "linux";

    it.runIf(onLinux)(
      "takes over a lock of this host from an earlier boot, though a live process has its pid now",
      async () => {
        const { dataDir, own } = await ownLock();
        // process.ppid lives (it ran this test), as an unrelated process may hold a pid after a reboot.
        const earlierBoot = { ...own, pid: process.ppid, claim: "before-reboot", boot: randomUUID() };
        await writeFile(lockPath(dataDir), JSON.stringify(earlierBoot));
        await (await claimDataDir(dataDir)).release();
      },
    );

    const elsewhere: [string, Record<string, string>, string][] = [
      ["another host", { host: "another-host.example" }, "process 999999 of host another-host.example"],
    ];
    if (onLinux) {
      elsewhere.push([
        "another PID namespace",
        { pidNamespace: "pid:[1]" },
        "process 999999 of another PID namespace",
      ]);
    }
    it.each(elsewhere)(
      "never takes a lock of %s for dead: it cannot check that pid",
      async (_where, scope, message) => {
        const { dataDir, own } = await ownLock();
        // Whatever process has this pid here, it is not the holder: a check of it here says nothing.
        const lock = { ...own, ...scope, pid: 999_999, claim: "elsewhere" };
        await writeFile(lockPath(dataDir), JSON.stringify(lock));
        const refusal = await claimDataDir(dataDir).catch((error: unknown) => error);
        expect(refusal).toBeInstanceOf(DataDirTakenError);
        expect((refusal as Error).message).toContain(message);
        expect(JSON.parse(await readFile(lockPath(dataDir), "utf8"))).toEqual(lock);
      },
    );
  });

  it.runIf(process.platform === "linux")(
    "never clears the takeover guard of a process in another container: that one may be taking the stale lock over",
    async () => {
      const dataDir = await tempDataDir();
      const stale = `${JSON.stringify({ pid: deadPid(), claim: "crashed" })}\n`;
      await writeFile(lockPath(dataDir), stale);
      const guardPath = `${lockPath(dataDir)}.takeover-${createHash("sha256").update(stale).digest("hex").slice(0, 16)}`;
      // This process's own lock, for its host and boot: the guard differs only in its PID namespace.
      const probe = await tempDataDir();
      const probeClaim = await claimDataDir(probe);
      const ownScope = JSON.parse(await readFile(lockPath(probe), "utf8")) as Record<string, unknown>;
      await probeClaim.release();
      const guard = JSON.stringify({
        ...ownScope,
        pid: 999_999,
        claim: "elsewhere",
        pidNamespace: "pid:[1]",
      });
      await writeFile(guardPath, guard);
      await expect(claimDataDir(dataDir)).rejects.toThrow("keeps changing");
      expect(await readFile(guardPath, "utf8")).toBe(guard);
      expect(await readFile(lockPath(dataDir), "utf8")).toBe(stale);
    },
  );

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
