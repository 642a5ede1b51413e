/**
 * Adding a field is all in the contract, for the API and for the client: on a copy of the repository
 * whose openapi/openapi.yaml has one more optional field in NewPlant and Plant, `npm run generate` and
 * nothing else, `npm test`'s type check and lint pass on the copy, the client's own tests pass there, the
 * copy's client sends the field to the copy's `npm start`, gets it back, and a resend with another value
 * of it is the API's 409. Only the document and the generated files differ from here.
 */
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { cp, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { pathToFileURL } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, expect, it } from "vitest";
import { parseDocument } from "yaml";
import type * as ClientModule from "../../client/index.ts";
import { CLIENT_GENERATED_DIR, generatedClientFiles } from "../../tools/generate-validator.ts";
import { REPO, type RunningServer, startServer, tempDataDir } from "../support/local-run.ts";
import { readStoredItem } from "../support/stored-item.ts";

/**
 * The field added: the first of these plausible names that the contract does not have yet (`color` is
 * the one a team adds first, and the one the client's tests once used as their unknown property).
 */
const PLAUSIBLE_NAMES = ["color", "colour", "leafColor", "addedByTheTest"];
let newField: string;
/** The client's tests that need no server: they must hold, unedited, with a field added. */
const CLIENT_UNIT_TESTS = [
  "test/client/create-plant.test.ts",
  "test/client/limits.test.ts",
  "test/client/secrets.test.ts",
  "test/client/tokens.test.ts",
];

const run = promisify(execFile);
/** The repository's files, tracked or new (not ignored): what a developer's `npm test` sees. */
let repositoryFiles: string[];

let copy: string;
let server: RunningServer;
let client: ClientModule.PlantStoreClient;
let store: { endpoint: string; tableName: string };

beforeAll(async () => {
  copy = await mkdtemp(join(tmpdir(), "plant-store-added-field-"));
  const { stdout } = await run("git", ["ls-files", "--cached", "--others", "--exclude-standard", "-z"], {
    cwd: REPO,
    maxBuffer: 16 * 1024 * 1024,
  });
  repositoryFiles = stdout.split("\0").filter((file) => file !== "" && existsSync(join(REPO, file)));
  for (const file of repositoryFiles) {
    await mkdir(dirname(join(copy, file)), { recursive: true });
    await cp(join(REPO, file), join(copy, file));
  }
  await symlink(join(REPO, "node_modules"), join(copy, "node_modules"), "dir");
  const openApiPath = join(copy, "openapi", "openapi.yaml");
  const document = parseDocument(await readFile(openApiPath, "utf8"), { intAsBigInt: true });
  const taken = (name: string) => document.hasIn(["components", "schemas", "NewPlant", "properties", name]);
  newField = PLAUSIBLE_NAMES.find((name) => !taken(name)) ?? "";
  expect(newField).not.toBe("");
  for (const schema of ["NewPlant", "Plant"]) {
    document.setIn(
      ["components", "schemas", schema, "properties", newField],
      document.createNode({
        type: "string",
        minLength: 1,
        maxLength: 32,
        description: "The colour of its leaves.",
      }),
    );
  }
  await writeFile(openApiPath, document.toString());
  await run("npm", ["run", "--silent", "generate"], { cwd: copy });

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
  for (const file of repositoryFiles) {
    const [mine, theirs] = await Promise.all([REPO, copy].map((root) => readFile(join(root, file), "utf8")));
    if (mine !== theirs) changed.push(file);
  }
  // README.md: its field table and 409 example are written from the document (tools/readme-contract.ts).
  expect(changed.sort()).toEqual([
    "README.md",
    "client/generated/plant-schema.ts",
    "lambda/generated/plant-schema.ts",
    "lambda/generated/validate-new-plant.js",
    "openapi/openapi.yaml",
  ]);
});

/** A tool of the repository's node_modules, run in the copy: its output, or its failure's. */
async function inCopy(tool: string, args: string[]): Promise<{ ok: boolean; output: string }> {
  return run(process.execPath, [join(copy, "node_modules", tool), ...args], {
    cwd: copy,
    maxBuffer: 16 * 1024 * 1024,
    env: { ...process.env, FORCE_COLOR: "0", NO_COLOR: "1" },
  }).then(
    ({ stdout, stderr }) => ({ ok: true, output: `${stdout}${stderr}` }),
    (error: { stdout?: string; stderr?: string }) => ({
      ok: false,
      output: `${error.stdout}${error.stderr}`,
    }),
  );
}

it("passes npm test's type check on the copy, every test file included", async () => {
  const checked = await inCopy("typescript/bin/tsc", ["--noEmit", "-p", "tsconfig.json"]);
  expect(checked.output).toBe("");
  expect(checked.ok).toBe(true);
}, 240_000);

it("passes npm test's lint on the copy's client and its generated files", async () => {
  const linted = await inCopy("@biomejs/biome/bin/biome", [
    "check",
    "--vcs-enabled=false",
    "client",
    "test/client",
  ]);
  expect(linted.ok, linted.output).toBe(true);
}, 120_000);

it("passes the client's own tests on the copy, unedited", async () => {
  const tested = await inCopy("vitest/vitest.mjs", ["run", ...CLIENT_UNIT_TESTS]);
  expect(tested.ok, tested.output.slice(-4000)).toBe(true);
  expect(tested.output).toMatch(new RegExp(`Test Files\\s+${CLIENT_UNIT_TESTS.length} passed`));
}, 240_000);

it("is sent by the client and answered back through npm start, and stored", async () => {
  const plant = { id: 2n ** 63n - 1n, name: "Fern", [newField]: "green" };
  expect(await client.createPlant(plant as ClientModule.NewPlant)).toEqual({
    name: "Fern",
    [newField]: "green",
  });
  expect(await readStoredItem(store.endpoint, store.tableName, "9223372036854775807")).toEqual({
    id: { N: "9223372036854775807" },
    name: { S: "Fern" },
    [newField]: { S: "green" },
  });
  // An identical resend is a replay; another value of the new field is a conflict, as for any field.
  expect(await client.createPlant(plant as ClientModule.NewPlant)).toEqual({
    name: "Fern",
    [newField]: "green",
  });
  await expect(
    client.createPlant({ ...plant, [newField]: "red" } as ClientModule.NewPlant),
  ).rejects.toMatchObject({
    status: 409,
  });
});

it("is still refused by the repository's own client, which was not generated from that document", async () => {
  const { createPlantStoreClient } = await import("../../client/index.ts");
  const ours = createPlantStoreClient({ baseUrl: server.url, credentials: { token: "unused" } });
  await expect(ours.createPlant({ id: 1n, name: "Fern", [newField]: "green" } as never)).rejects.toThrow(
    `unknown property '${newField}'`,
  );
});
