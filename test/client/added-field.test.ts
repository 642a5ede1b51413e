/**
 * Adding a field is all in the contract, for the API and for the client: on a copy of the repository
 * whose openapi/openapi.yaml has one more optional field in NewPlant and Plant, `npm run generate` and
 * nothing else, the copy's client sends the field to the copy's `npm start`, gets it back, and a resend
 * with another value of it is the API's 409. Only the document and the generated files differ from here.
 */
import { execFile } from "node:child_process";
import { cp, mkdtemp, readdir, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, expect, it } from "vitest";
import { parseDocument } from "yaml";
import type * as ClientModule from "../../client/index.ts";
import { CLIENT_GENERATED_DIR, generatedClientFiles } from "../../tools/generate-validator.ts";
import { REPO, type RunningServer, startServer, tempDataDir } from "../support/local-run.ts";
import { readStoredItem } from "../support/stored-item.ts";

/** A name no schema of the project would use, so that the test holds whatever fields were added since. */
const NEW_FIELD = "addedByTheTest";
/** What `npm start` and `npm run generate` need of the repository; node_modules is linked, not copied. */
const COPIED = [
  "client",
  "infra",
  "lambda",
  "local",
  "openapi",
  "support",
  "tools",
  "types",
  "package.json",
  "tsconfig.json",
];

let copy: string;
let server: RunningServer;
let client: ClientModule.PlantStoreClient;
let store: { endpoint: string; tableName: string };

beforeAll(async () => {
  copy = await mkdtemp(join(tmpdir(), "plant-store-added-field-"));
  for (const entry of COPIED) {
    await cp(join(REPO, entry), join(copy, entry), {
      recursive: true,
      filter: (source) => !/[/\\](dist|node_modules)$/.test(source),
    });
  }
  await symlink(join(REPO, "node_modules"), join(copy, "node_modules"), "dir");
  const openApiPath = join(copy, "openapi", "openapi.yaml");
  const document = parseDocument(await readFile(openApiPath, "utf8"), { intAsBigInt: true });
  for (const schema of ["NewPlant", "Plant"]) {
    document.setIn(
      ["components", "schemas", schema, "properties", NEW_FIELD],
      document.createNode({
        type: "string",
        minLength: 1,
        maxLength: 32,
        description: "The colour of its leaves.",
      }),
    );
  }
  await writeFile(openApiPath, document.toString());
  await promisify(execFile)("npm", ["run", "--silent", "generate"], { cwd: copy });

  const dataDir = await tempDataDir();
  server = await startServer({ PLANTS_DATA_DIR: dataDir }, { cwd: copy });
  const local = JSON.parse(await readFile(join(dataDir, "client.json"), "utf8"));
  ({ store } = JSON.parse(await readFile(join(dataDir, "server.json"), "utf8")));
  const copiedClient = (await import(
    pathToFileURL(join(copy, "client", "index.ts")).href
  )) as typeof ClientModule;
  client = copiedClient.createPlantStoreClient({
    baseUrl: local.baseUrl,
    credentials: { clientId: local.clientId, clientSecret: local.clientSecret, tokenUrl: local.tokenUrl },
    retry: { attemptTimeoutMs: 20_000, deadlineMs: 20_000 },
  });
}, 120_000);

afterAll(async () => {
  await server?.stop();
  if (copy) await rm(copy, { recursive: true, force: true });
});

it.each([...generatedClientFiles()])(
  "client/generated/%s is what the document gives (run npm run generate after editing it)",
  async (name, content) => {
    expect(await readFile(join(CLIENT_GENERATED_DIR, name), "utf8")).toBe(content);
  },
);

it("differs from the repository only in the document and the generated files", async () => {
  const changed: string[] = [];
  for (const entry of COPIED) {
    const files = entry.includes(".") ? [entry] : await readdir(join(copy, entry), { recursive: true });
    for (const file of files) {
      const path = entry.includes(".") ? entry : join(entry, String(file));
      const [mine, theirs] = await Promise.all(
        [REPO, copy].map((root) => readFile(join(root, path), "utf8").catch(() => undefined)),
      );
      if (mine !== theirs) changed.push(path);
    }
  }
  expect(changed.sort()).toEqual([
    "client/generated/plant-schema.ts",
    "lambda/generated/plant-schema.ts",
    "lambda/generated/validate-new-plant.js",
    "openapi/openapi.yaml",
  ]);
});

it("is sent by the client and answered back through npm start, and stored", async () => {
  const plant = { id: 2n ** 63n - 1n, name: "Fern", [NEW_FIELD]: "green" };
  expect(await client.createPlant(plant as ClientModule.NewPlant)).toEqual({
    name: "Fern",
    [NEW_FIELD]: "green",
  });
  expect(await readStoredItem(store.endpoint, store.tableName, "9223372036854775807")).toEqual({
    id: { N: "9223372036854775807" },
    name: { S: "Fern" },
    [NEW_FIELD]: { S: "green" },
  });
  // An identical resend is a replay; another value of the new field is a conflict, as for any field.
  expect(await client.createPlant(plant as ClientModule.NewPlant)).toEqual({
    name: "Fern",
    [NEW_FIELD]: "green",
  });
  await expect(
    client.createPlant({ ...plant, [NEW_FIELD]: "red" } as ClientModule.NewPlant),
  ).rejects.toMatchObject({
    status: 409,
  });
});

it("is still refused by the repository's own client, which was not generated from that document", async () => {
  const { createPlantStoreClient } = await import("../../client/index.ts");
  const ours = createPlantStoreClient({ baseUrl: server.url, credentials: { token: "unused" } });
  await expect(ours.createPlant({ id: 1n, name: "Fern", [NEW_FIELD]: "green" } as never)).rejects.toThrow(
    `unknown property '${NEW_FIELD}'`,
  );
});
