/**
 * `${dataDir}/server.json` while `npm start` runs: how `npm run invoke` finds the running server's store
 * and key set, since only one process at a time can open the embedded store's LevelDB files.
 */
import { randomUUID } from "node:crypto";
import { readFile, rename, unlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { StoreTarget } from "./handler-environment.ts";
import type { TokenIssuer } from "./token-issuer.ts";

export interface ServerRecord {
  pid: number;
  url: string;
  jwksUrl: string;
  store: StoreTarget;
}

const ALIVE_CHECK_TIMEOUT_MS = 1000;

function recordPath(dataDir: string): string {
  return join(dataDir, "server.json");
}

export async function writeServerRecord(dataDir: string, record: ServerRecord): Promise<void> {
  const temporary = `${recordPath(dataDir)}.${randomUUID()}.tmp`;
  await writeFile(temporary, `${JSON.stringify(record, null, 2)}\n`, { mode: 0o600 });
  await rename(temporary, recordPath(dataDir));
}

/** Removes the record if it is still this server's (another server may have started on the same dir since). */
export async function removeServerRecord(dataDir: string, url: string): Promise<void> {
  if ((await readServerRecord(dataDir))?.url !== url) return;
  await unlink(recordPath(dataDir)).catch(() => undefined);
}

/**
 * The server running for this data dir: its record exists and its URL answers with this dir's signing
 * key (a stale record, whose port another server may have taken since, is ignored).
 */
export async function findRunningServer(
  dataDir: string,
  issuer: TokenIssuer,
): Promise<ServerRecord | undefined> {
  const record = await readServerRecord(dataDir);
  if (!record) return undefined;
  try {
    const response = await fetch(record.jwksUrl, { signal: AbortSignal.timeout(ALIVE_CHECK_TIMEOUT_MS) });
    const served = (await response.json()) as { keys?: { kid?: string }[] };
    const ownKeyIds = issuer.jwks.keys.map((key) => key.kid);
    return served.keys?.some((key) => ownKeyIds.includes(key.kid)) ? record : undefined;
  } catch {
    return undefined;
  }
}

async function readServerRecord(dataDir: string): Promise<ServerRecord | undefined> {
  try {
    return JSON.parse(await readFile(recordPath(dataDir), "utf8")) as ServerRecord;
  } catch {
    return undefined;
  }
}
