/** <data dir>/client.json: a secret made once and kept, URLs that follow the port, private to its owner. */
import { readFile, stat, writeFile } from "node:fs/promises";
import { expect, it } from "vitest";
import { localClientPath, readLocalClient, saveLocalClient } from "../../local/local-client.ts";
import { tempDataDir } from "../support/local-run.ts";

const urls = (port: number) => ({
  baseUrl: `http://127.0.0.1:${port}`,
  tokenUrl: `http://127.0.0.1:${port}/oauth2/token`,
});

it("keeps the secret across starts, rewrites the base and token URLs, and stays mode 0600", async () => {
  const dataDir = await tempDataDir();
  const first = await saveLocalClient(dataDir, urls(1111));
  const second = await saveLocalClient(dataDir, urls(2222));
  expect(second).toEqual({ ...first, ...urls(2222) });
  expect(await readLocalClient(dataDir)).toEqual(second);
  expect((await stat(localClientPath(dataDir))).mode & 0o777).toBe(0o600);
  expect(JSON.parse(await readFile(localClientPath(dataDir), "utf8"))).toEqual(second);
});

const goodSecret = "a".repeat(64);
it.each([
  ["a short secret", '{"clientId":"plant-store-local","clientSecret":"short","tokenUrl":"x"}'],
  ["null", "null"],
  ["an array", "[]"],
  ["no JSON", "{"],
  [
    "a token URL that is no URL",
    `{"clientId":"plant-store-local","clientSecret":"${goodSecret}","tokenUrl":"x"}`,
  ],
])("makes a new secret when the file holds none worth keeping: %s", async (_, contents) => {
  const dataDir = await tempDataDir();
  await writeFile(localClientPath(dataDir), contents);
  expect(await readLocalClient(dataDir)).toBeUndefined();
  const client = await saveLocalClient(dataDir, urls(1111));
  expect(client.clientSecret).toMatch(/^[0-9a-f]{64}$/);
});

it("reads a client.json of an older start, without baseUrl, as the token endpoint's origin", async () => {
  const dataDir = await tempDataDir();
  const { baseUrl: _, ...older } = await saveLocalClient(dataDir, urls(3333));
  await writeFile(localClientPath(dataDir), JSON.stringify(older));
  expect(await readLocalClient(dataDir)).toEqual({ ...older, baseUrl: "http://127.0.0.1:3333" });
});
