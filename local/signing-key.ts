/** The local issuer's private key, made on first use and kept in the data dir so tokens outlive restarts. */
import { randomUUID } from "node:crypto";
import { link, readFile, unlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { JWK } from "jose";
import { createDataDir } from "./local-settings.ts";
import { generateSigningKey } from "./token-issuer.ts";

export function signingKeyPath(dataDir: string): string {
  return join(dataDir, "signing-key.json");
}

export async function loadOrCreateSigningKey(dataDir: string): Promise<JWK> {
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
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
  try {
    return JSON.parse(text) as JWK;
  } catch {
    throw new Error(`${path} is not a JSON Web Key; delete it to make a new one (older tokens stop working)`);
  }
}
