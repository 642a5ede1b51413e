/**
 * `${dataDir}/server.lock`: the claim of the one process that serves a data dir (`npm start`, or
 * `npm run invoke` opening the store itself). LevelDB takes one process at a time, and a second one
 * would fail obscurely (dynalite's "Database is closed"), so the dir is claimed, atomically, before the
 * store opens: exactly one of two processes started at the same moment wins.
 */
import { randomUUID } from "node:crypto";
import { link, readFile, rename, unlink, writeFile } from "node:fs/promises";
import { join } from "node:path";

export interface DataDirClaim {
  /** Removes the lock file, if it is still this claim's. */
  release(): Promise<void>;
}

/** Another live process holds the data dir. */
export class DataDirTakenError extends Error {
  constructor(
    readonly dataDir: string,
    readonly holderPid: number,
  ) {
    super(
      `a local API (process ${holderPid}) already serves ${dataDir}; stop it, or set another PLANTS_DATA_DIR ` +
        `(if no such process is a local API, delete ${lockPath(dataDir)})`,
    );
  }
}

interface LockContent {
  pid: number;
  /** Unique per claim: tells this claim's file from any other, even in the same process. */
  claim: string;
}

/** The claims this process holds: a lock naming this pid is stale unless its claim is one of these. */
const heldClaims = new Set<string>();
const ATTEMPTS = 5;

export function lockPath(dataDir: string): string {
  return join(dataDir, "server.lock");
}

export async function claimDataDir(dataDir: string): Promise<DataDirClaim> {
  const path = lockPath(dataDir);
  const own: LockContent = { pid: process.pid, claim: randomUUID() };
  const ownText = `${JSON.stringify(own)}\n`;
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    if (await createLock(path, ownText)) {
      heldClaims.add(own.claim);
      return { release: () => releaseLock(path, own.claim) };
    }
    const holder = await readLock(path);
    if (holder === undefined) continue; // released meanwhile: try again
    const pid = holderPid(holder.text);
    if (pid !== undefined && isAlive(pid, holder.text)) throw new DataDirTakenError(dataDir, pid);
    await removeStaleLock(path, holder.text);
  }
  throw new Error(`could not claim ${dataDir}: ${path} keeps changing; is another local API starting?`);
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

function isAlive(pid: number, text: string): boolean {
  if (pid === process.pid) return heldClaims.has(holderClaim(text) ?? "");
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM"; // alive, another user's
  }
}

/**
 * Takes a dead process's lock away by renaming it aside (one rename wins). Two processes may both
 * have read the stale lock; the slower one may then move the faster one's new, live lock instead: the
 * content (each claim is unique) tells, and a live lock moved by mistake is linked back into place.
 */
async function removeStaleLock(path: string, staleText: string): Promise<void> {
  const aside = `${path}.${randomUUID()}.stale`;
  try {
    await rename(path, aside);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return;
    throw error;
  }
  try {
    if ((await readFile(aside, "utf8")) !== staleText) {
      await link(aside, path).catch((error: NodeJS.ErrnoException) => {
        if (error.code !== "EEXIST") throw error;
      });
    }
  } finally {
    await unlink(aside);
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
