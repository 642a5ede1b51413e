/**
 * The dev token issuer of the local run. Its issuer name is a constant, not the server's URL, and its
 * private key is made on first use and kept in the data dir, so tokens stay valid across restarts and
 * ports; the server publishes its key set on loopback for the handler.
 */
import { randomUUID } from "node:crypto";
import { link, readFile, unlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { JWK } from "jose";
import { createDataDir } from "./local-settings.ts";
import { createTokenIssuer, generateSigningKey, type MintOptions, type TokenIssuer } from "./token-issuer.ts";

export const LOCAL_ISSUER = "https://local.plant-store.invalid/issuer";

export async function loadLocalIssuer(dataDir: string): Promise<TokenIssuer> {
  return createTokenIssuer(LOCAL_ISSUER, await loadOrCreateSigningKey(dataDir));
}

/** What `npm run token` prints: a token the local API accepts (scope plants/write, one hour, by default). */
export async function mintLocalToken(dataDir: string, options: MintOptions = {}): Promise<string> {
  return (await loadLocalIssuer(dataDir)).mint(options);
}

export function signingKeyPath(dataDir: string): string {
  return join(dataDir, "signing-key.json");
}

async function loadOrCreateSigningKey(dataDir: string): Promise<JWK> {
  const path = signingKeyPath(dataDir);
  const existing = await readKey(path);
  if (existing) return existing;
  await createDataDir(dataDir);
  // Written whole to a private temporary file, then linked into place: link() never replaces a file,
  // so when `npm start` and `npm run token` race to make the first key, both end up using the same one.
  const temporary = `${path}.${randomUUID()}.tmp`;
  await writeFile(temporary, `${JSON.stringify(await generateSigningKey())}\n`, { mode: 0o600, flag: "wx" });
  try {
    await link(temporary, path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
  } finally {
    await unlink(temporary);
  }
  const created = await readKey(path);
  if (!created) throw new Error(`could not create the signing key ${path}`);
  return created;
}

async function readKey(path: string): Promise<JWK | undefined> {
  const text = await readFile(path, "utf8").catch((error: NodeJS.ErrnoException) => {
    if (error.code === "ENOENT") return undefined;
    throw error;
  });
  try {
    return text === undefined ? undefined : (JSON.parse(text) as JWK);
  } catch {
    throw new Error(`${path} is not a JSON Web Key; delete it to make a new one (older tokens stop working)`);
  }
}
