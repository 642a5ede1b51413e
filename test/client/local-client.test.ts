/** <data dir>/client.json: a secret made once and kept, a token URL that follows the port, private to its owner. */
import { readFile, stat, writeFile } from "node:fs/promises";
import { expect, it } from "vitest";
import { localClientPath, readLocalClient, saveLocalClient } from "../../local/local-client.ts";
import { tempDataDir } from "../support/local-run.ts";

it("keeps the secret across starts, rewrites the token URL, and stays mode 0600", async () => {
  const dataDir = await tempDataDir();
  const first = await saveLocalClient(dataDir, "http://127.0.0.1:1111/oauth2/token");
  const second = await saveLocalClient(dataDir, "http://127.0.0.1:2222/oauth2/token");
  expect(second).toEqual({ ...first, tokenUrl: "http://127.0.0.1:2222/oauth2/token" });
  expect(await readLocalClient(dataDir)).toEqual(second);
  expect((await stat(localClientPath(dataDir))).mode & 0o777).toBe(0o600);
  expect(JSON.parse(await readFile(localClientPath(dataDir), "utf8"))).toEqual(second);
});

it("makes a new secret when the file holds none worth keeping", async () => {
  const dataDir = await tempDataDir();
  await writeFile(
    localClientPath(dataDir),
    '{"clientId":"plant-store-local","clientSecret":"short","tokenUrl":"x"}',
  );
  const client = await saveLocalClient(dataDir, "http://127.0.0.1:1111/oauth2/token");
  expect(client.clientSecret).toMatch(/^[0-9a-f]{64}$/);
});
