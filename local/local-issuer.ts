/**
 * The dev token issuer of the local run. Its issuer name is a constant, not the server's URL, so tokens
 * stay valid across restarts and ports; the server publishes its key set on loopback for the handler.
 */
import { loadOrCreateSigningKey } from "./signing-key.ts";
import { createTokenIssuer, type MintOptions, type TokenIssuer } from "./token-issuer.ts";

export const LOCAL_ISSUER = "https://local.plant-store.invalid/issuer";

export async function loadLocalIssuer(dataDir: string): Promise<TokenIssuer> {
  return createTokenIssuer(LOCAL_ISSUER, await loadOrCreateSigningKey(dataDir));
}

/** What `npm run token` prints: a token the local API accepts (scope plants/write, one hour, by default). */
export async function mintLocalToken(dataDir: string, options: MintOptions = {}): Promise<string> {
  return (await loadLocalIssuer(dataDir)).mint(options);
}
