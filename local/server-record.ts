/**
 * `${dataDir}/server.json` while `npm start` runs: how `npm run invoke` finds the running server's store
 * and key set, since only one process at a time can open the embedded store's LevelDB files.
 */
import { readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { StoreTarget } from "./handler-environment.ts";
import type { TokenIssuer } from "./token-issuer.ts";

export interface ServerRecord {
  url: string;
  jwksUrl: string;
  store: StoreTarget;
}

const recordPath = (dataDir: string) => join(dataDir, "server.json");

export async function writeServerRecord(dataDir: string, record: ServerRecord): Promise<void> {
  await writeFile(recordPath(dataDir), `${JSON.stringify(record, null, 2)}\n`, { mode: 0o600 });
}

export async function removeServerRecord(dataDir: string): Promise<void> {
  await rm(recordPath(dataDir), { force: true });
}

/**
 * The server running for this data dir: its record exists and its URL answers with this dir's signing
 * key (a stale record, whose port another server may have taken since, is ignored).
 */
export async function findRunningServer(
  dataDir: string,
  issuer: TokenIssuer,
): Promise<ServerRecord | undefined> {
  try {
    const record = JSON.parse(await readFile(recordPath(dataDir), "utf8")) as ServerRecord;
    const response = await fetch(record.jwksUrl, { signal: AbortSignal.timeout(1000) });
    const served = (await response.json()) as { keys?: { kid?: string }[] };
    const ownKeyIds = issuer.jwks.keys.map((key) => key.kid);
    return served.keys?.some((key) => ownKeyIds.includes(key.kid)) ? record : undefined;
  } catch {
    return undefined;
  }
}
