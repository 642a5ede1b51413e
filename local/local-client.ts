/**
 * `<data dir>/client.json`: the local run's app client, as a program needs it to call the API with tokens
 * it gets like it would from the stack's Cognito: `{ "baseUrl", "clientId", "clientSecret", "tokenUrl" }`,
 * private (mode 0600). The secret is made at the first start and kept; the URLs are rewritten at each start,
 * since the port may change. `baseUrl` is the client's baseUrl (plants are posted to `<baseUrl>/plants`).
 */
import { randomBytes, randomUUID } from "node:crypto";
import { readFile, rename, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { LOCAL_CLIENT_ID } from "./token-issuer.ts";

export interface LocalClient {
  /** The API's base URL, e.g. http://127.0.0.1:3000 (the API is `<baseUrl>/plants`). */
  baseUrl: string;
  clientId: string;
  clientSecret: string;
  tokenUrl: string;
}

export function localClientPath(dataDir: string): string {
  return join(dataDir, "client.json");
}

/** The client of the data dir with these URLs, its secret made now if it has none; not saved. */
export async function localClientOf(
  dataDir: string,
  { baseUrl, tokenUrl }: { baseUrl: string; tokenUrl: string },
): Promise<LocalClient> {
  const existing = await readLocalClient(dataDir);
  return {
    baseUrl,
    // The handler of the local run accepts tokens of this one client id (JWT_CLIENT_IDS).
    clientId: LOCAL_CLIENT_ID,
    clientSecret: existing?.clientSecret ?? randomBytes(32).toString("hex"),
    tokenUrl,
  };
}

/** The client of the data dir, with its secret made now if it has none, saved with these URLs. */
export async function saveLocalClient(
  dataDir: string,
  urls: { baseUrl: string; tokenUrl: string },
): Promise<LocalClient> {
  const client = await localClientOf(dataDir, urls);
  const path = localClientPath(dataDir);
  const temporary = `${path}.${randomUUID()}.tmp`;
  await writeFile(temporary, `${JSON.stringify(client, null, 2)}\n`, { mode: 0o600, flag: "wx" });
  await rename(temporary, path);
  return client;
}

/** The client saved in the data dir by `npm start`, or undefined when none is (or it is unreadable). */
export async function readLocalClient(dataDir: string): Promise<LocalClient | undefined> {
  let parsed: Partial<LocalClient> | null;
  try {
    parsed = JSON.parse(await readFile(localClientPath(dataDir), "utf8")) as Partial<LocalClient> | null;
  } catch {
    return undefined;
  }
  const { baseUrl, clientId, clientSecret, tokenUrl } = parsed ?? {};
  if (typeof clientId !== "string" || typeof clientSecret !== "string" || typeof tokenUrl !== "string") {
    return undefined;
  }
  if (clientSecret.length < 32 || !URL.canParse(tokenUrl)) return undefined;
  // A client.json of an older start has no baseUrl: the local run serves the API beside its token endpoint.
  return {
    baseUrl: typeof baseUrl === "string" ? baseUrl : new URL(tokenUrl).origin,
    clientId,
    clientSecret,
    tokenUrl,
  };
}
