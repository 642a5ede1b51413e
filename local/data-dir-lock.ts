/**
 * `${dataDir}/server.lock`: the claim of the one process that serves a data dir (`npm start`, or
 * `npm run invoke` opening the store itself). LevelDB takes one process at a time, and a second one
 * would fail obscurely (dynalite's "Database is closed"), so the dir is claimed, atomically, before the
 * store opens: exactly one of two processes started at the same moment wins. A lock names its process
 * and where that pid means something (host, boot, PID namespace): a lock from before a reboot is stale
 * whatever process has its pid now, and one from another host or container is never taken for dead.
 */
import { createHash, randomUUID } from "node:crypto";
import { readFileSync, readlinkSync } from "node:fs";
import { link, readFile, unlink, writeFile } from "node:fs/promises";
import { hostname } from "node:os";
import { join } from "node:path";
import { systemClock } from "../lambda/clock.ts";

export interface DataDirClaim {
  /** Removes the lock file, if it is still this claim's. */
  release(): Promise<void>;
}

/** Another live process holds the data dir, or one on another host or in another container. */
export class DataDirTakenError extends Error {
  constructor(
    readonly dataDir: string,
    readonly holderPid: number,
    holderElsewhere?: string,
  ) {
    const holder = holderElsewhere
      ? `process ${holderPid} of ${holderElsewhere}, whose liveness cannot be checked from here`
      : `process ${holderPid}`;
    super(
      `a local API (${holder}) already serves ${dataDir}; stop it, or set another PLANTS_DATA_DIR ` +
        `(if no such process is a local API, delete ${lockPath(dataDir)})`,
    );
  }
}

/** Where a pid means one process: the host, its boot, and the PID namespace (a container has its own). */
interface PidScope {
  host: string;
  boot: string;
  pidNamespace: string;
}

interface LockContent extends Partial<PidScope> {
  pid: number;
  /** Unique per claim: tells this claim's file from any other, even in the same process. */
  claim: string;
}

/** This process's PidScope; boot and namespace are Linux's, empty elsewhere (the pid is then taken as local). */
const ownScope: PidScope = {
  host: hostname(),
  boot: readOrEmpty(() => readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim()),
  pidNamespace: readOrEmpty(() => readlinkSync("/proc/self/ns/pid")),
};

function readOrEmpty(read: () => string): string {
  try {
    return read();
  } catch {
    return "";
  }
}

/** The claims this process holds: a lock naming this pid is stale unless its claim is one of these. */
const heldClaims = new Set<string>();
/** Each attempt either claims, refuses, or gets a stale lock removed (by this process or another). */
const ATTEMPTS = 100;
const TAKEOVER_WAIT_MS = 2;

export function lockPath(dataDir: string): string {
  return join(dataDir, "server.lock");
}

export async function claimDataDir(dataDir: string): Promise<DataDirClaim> {
  const path = lockPath(dataDir);
  const own: LockContent = { pid: process.pid, claim: randomUUID(), ...ownScope };
  const ownText = `${JSON.stringify(own)}\n`;
  // Held from before the lock exists: another claim of this process must never find it stale.
  heldClaims.add(own.claim);
  try {
    for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
      if (await createLock(path, ownText)) return { release: () => releaseLock(path, own.claim) };
      const holder = await readLock(path);
      if (holder === undefined) continue; // released meanwhile: try again
      const pid = holderPid(holder.text);
      const liveness = pid === undefined ? "dead" : holderLiveness(pid, holder.text);
      if (pid !== undefined && liveness !== "dead") {
        throw new DataDirTakenError(dataDir, pid, liveness === "alive" ? undefined : liveness.elsewhere);
      }
      await removeStaleLock(path, holder.text);
    }
    throw new Error(`could not claim ${dataDir}: ${path} keeps changing; is another local API starting?`);
  } catch (error) {
    heldClaims.delete(own.claim);
    throw error;
  }
}

/** Written whole aside, then linked into place: link() never replaces a file, and no one reads it half-written. */
async function createLock(path: string, text: string): Promise<boolean> {
  const temporary = `${path}.${randomUUID()}.tmp`;
  await writeFile(temporary, text, { mode: 0o600, flag: "wx" });
  try {
    await link(temporary, path);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EEXIST") return false;
    throw error;
  } finally {
    await unlink(temporary);
  }
}

async function readLock(path: string): Promise<{ text: string } | undefined> {
  try {
    return { text: await readFile(path, "utf8") };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
}

function holderPid(text: string): number | undefined {
  try {
    const { pid } = JSON.parse(text) as Partial<LockContent>;
    return Number.isSafeInteger(pid) && (pid ?? 0) > 0 ? pid : undefined;
  } catch {
    return undefined; // not a lock this code wrote: stale
  }
}

/**
 * Whether a lock's holder lives. Its pid is checked only where it means the same process as here; a lock
 * of this host from an earlier boot is dead; one of another host or PID namespace cannot be checked and
 * counts as alive. A lock naming no scope (written before locks named one) is taken as local.
 */
function holderLiveness(pid: number, text: string): "alive" | "dead" | { elsewhere: string } {
  const scope = holderScope(text);
  if (scope.host !== undefined && scope.host !== ownScope.host) return { elsewhere: `host ${scope.host}` };
  if (scope.boot && ownScope.boot && scope.boot !== ownScope.boot) return "dead";
  if (scope.pidNamespace && ownScope.pidNamespace && scope.pidNamespace !== ownScope.pidNamespace) {
    return { elsewhere: `another PID namespace (a container?), ${scope.pidNamespace}` };
  }
  if (pid === process.pid) return heldClaims.has(holderClaim(text) ?? "") ? "alive" : "dead";
  return processAlive(pid) ? "alive" : "dead";
}

function holderScope(text: string): Partial<PidScope> {
  try {
    const { host, boot, pidNamespace } = JSON.parse(text) as Partial<LockContent>;
    return { host, boot, pidNamespace };
  } catch {
    return {};
  }
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM"; // alive, another user's
  }
}

/**
 * Removes a dead process's lock. Several processes may find the same stale lock at once; each claim's
 * content is unique, so a guard file named after that content, created exclusively, lets one of them
 * at a time check that the lock still holds that content and remove it. A lock is only ever removed
 * by its holder or under such a guard, and a live one never matches: a new claim is never removed.
 */
async function removeStaleLock(path: string, staleText: string): Promise<void> {
  const guard = `${path}.takeover-${createHash("sha256").update(staleText).digest("hex").slice(0, 16)}`;
  const guardContent: LockContent = { pid: process.pid, claim: randomUUID(), ...ownScope };
  if (!(await createLock(guard, `${JSON.stringify(guardContent)}\n`))) {
    // Another process (or claim of this one) is removing it. Only if that process died meanwhile,
    // in the instant between creating its guard and removing it, is the guard in the way for good; one of
    // another host or container is never taken for dead, as a lock of theirs is not.
    const guardHolder = await readLock(guard);
    const pid = guardHolder && holderPid(guardHolder.text);
    const dead = pid === undefined || holderLiveness(pid, guardHolder?.text ?? "") === "dead";
    if (guardHolder && pid !== process.pid && dead) {
      await unlink(guard).catch(() => undefined);
    } else await systemClock.sleep(TAKEOVER_WAIT_MS);
    return;
  }
  try {
    if ((await readLock(path))?.text === staleText) await unlink(path).catch(() => undefined);
  } finally {
    await unlink(guard).catch(() => undefined);
  }
}

async function releaseLock(path: string, claim: string): Promise<void> {
  heldClaims.delete(claim);
  // A claim is never taken over while its process lives: nothing replaces it between the read and the unlink.
  const current = await readLock(path).catch(() => undefined);
  if (current && holderClaim(current.text) === claim) await unlink(path).catch(() => undefined);
}

function holderClaim(text: string): string | undefined {
  try {
    return (JSON.parse(text) as Partial<LockContent>).claim;
  } catch {
    return undefined;
  }
}
