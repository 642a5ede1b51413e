/**
 * The client as another project gets it: `npm pack` in client/ gives a tarball of the build's dist/ (whose
 * files import nothing but each other and the package's dependencies, as test/tools/build-client.test.ts
 * checks) and exact versions of those dependencies; it installs (offline, from the npm cache the
 * repository's own install filled) into a project outside the repository, type-checks there in strict
 * mode under module resolution nodenext and bundler, and the README's snippet, as written, creates a
 * plant with id 2^63 − 1 against `npm start`.
 */
import { execFile } from "node:child_process";
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { REPO, type RunningServer, startServer, tempDataDir } from "../support/local-run.ts";
import { readStoredItem } from "../support/stored-item.ts";

const run = promisify(execFile);
const TSC = join(REPO, "node_modules", "typescript", "bin", "tsc");
const README_SNIPPET = /```ts\n(\/\/ create-plant\.ts in your project[\s\S]*?)```/;

let work: string;
let consumer: string;
/** The package as the consumer's npm install unpacked it. */
let installed: string;

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), "plant-store-client-package-"));
  const { stdout } = await run("npm", ["pack", "--json", "--pack-destination", work], {
    cwd: join(REPO, "client"),
  });
  // The prepack script (the build) prints first; npm's JSON report comes last.
  const [{ filename }] = JSON.parse(stdout.slice(stdout.search(/^\[/m))) as [{ filename: string }];
  const tarball = join(work, filename);
  consumer = join(work, "consumer");
  await mkdir(consumer);
  await writeFile(
    join(consumer, "package.json"),
    '{ "name": "consumer", "private": true, "type": "module" }\n',
  );
  await run("npm", ["install", "--offline", "--no-audit", "--no-fund", "--ignore-scripts", tarball], {
    cwd: consumer,
  });
  installed = join(consumer, "node_modules", "@plant-store", "client");
  await writeFile(join(consumer, "consumer.ts"), CONSUMER_SOURCE);
});

afterAll(async () => {
  if (work) await rm(work, { recursive: true, force: true });
});

describe("the packed tarball, as npm installed it", () => {
  it("is outside the repository, depends on exact versions only, and declares ESM with types", async () => {
    expect(resolve(work).startsWith(resolve(REPO))).toBe(false);
    const manifest = JSON.parse(await readFile(join(installed, "package.json"), "utf8"));
    expect(manifest).toMatchObject({
      name: "@plant-store/client",
      version: expect.stringMatching(/^\d+\.\d+\.\d+$/),
      type: "module",
      exports: {
        ".": { types: "./dist/index.d.ts", default: "./dist/index.js" },
        "./index.min.js": { types: "./dist/index.d.ts", default: "./dist/index.min.js" },
      },
    });
    expect(Object.keys(manifest.dependencies).sort()).toEqual([
      "lossless-json",
      "oauth4webapi",
      "openapi-fetch",
    ]);
    for (const version of Object.values(manifest.dependencies)) expect(version).toMatch(/^\d+\.\d+\.\d+$/);
    expect(manifest.peerDependencies).toBeUndefined();
  });

  it("holds the client's modules and declarations in dist/, and nothing of the function's (lambda/)", async () => {
    const files = (await readdir(installed, { recursive: true, encoding: "utf8" })).filter((file) =>
      /\.(js|d\.ts)$/.test(file),
    );
    expect(files).toEqual(expect.arrayContaining(["dist/index.js", "dist/index.min.js", "dist/index.d.ts"]));
    expect(
      files.filter((file) => !/^dist\/[\w/.-]+\.(js|d\.ts)$/.test(file) || file.includes("lambda")),
    ).toEqual([]);
  });
});

/** A consumer of the package's types, checked with the settings of a strict project. */
const CONSUMER_SOURCE = `import {
  createPlantStoreClient,
  DEFAULT_RETRY_POLICY,
  type NewPlant,
  type Plant,
  PlantStoreError,
  type PlantStoreErrorKind,
  TokenEndpointError,
} from "@plant-store/client";

export async function createFern(baseUrl: string, token: () => Promise<string>): Promise<Plant> {
  const client = createPlantStoreClient({ baseUrl, credentials: { token }, retry: { maxAttempts: 2 } });
  createPlantStoreClient({ baseUrl, credentials: { token: tokenFunction } });
  const plant: NewPlant = { id: 9223372036854775807n, name: "Fern" };
  // Under exactOptionalPropertyTypes an optional field of the caller's own may be undefined.
  createPlantStoreClient({ baseUrl, credentials: { token } }).createPlant({ ...plant, tag: settingOf("tag") });
  const typo = { id: 1n, name: "Fern", tga: "x" };
  // @ts-expect-error a property the contract does not have is a type error, through the declarations
  void (() => client.createPlant(typo));
  try {
    return await client.createPlant(plant);
  } catch (error) {
    if (error instanceof TokenEndpointError) throw new Error(error.tokenUrl);
    if (error instanceof PlantStoreError) throw new Error(advice(error.kind, error.serverMessage));
    throw error;
  }
}

/** A switch on the kind that the compiler checks covers every kind. */
function advice(kind: PlantStoreErrorKind, serverMessage: string | undefined): string {
  switch (kind) {
    case "conflict":
      return \`another plant has that id: \${serverMessage ?? ""}\`;
    case "invalid-request":
    case "unauthorized":
    case "forbidden":
    case "not-found":
    case "redirect":
    case "unexpected-answer":
      return "fix the call or the settings";
    case "throttled":
    case "unavailable":
    case "server-error":
    case "network":
    case "timeout":
      return "try again later";
    default: {
      const unknownKind: never = kind;
      return unknownKind;
    }
  }
}

/**
 * Settings that may be undefined, as a caller's own optional ones are: each is the default then, and
 * under exactOptionalPropertyTypes the types must say so.
 */
export function clientWithSettings(
  baseUrl: string,
  settings: { deadlineMs?: number; signal?: AbortSignal },
): ReturnType<typeof createPlantStoreClient> {
  const { deadlineMs, signal } = settings;
  const defaults: { maxAttempts: number; deadlineMs: number } = DEFAULT_RETRY_POLICY;
  return createPlantStoreClient({
    baseUrl,
    credentials: { token: "t" },
    retry: { deadlineMs, maxAttempts: deadlineMs === undefined ? undefined : defaults.maxAttempts },
    signal,
    fetch: undefined,
    clock: undefined,
    random: undefined,
  });
}

const settingOf = (name: string): string | undefined => (name === "" ? name : undefined);

/** A token function that says when its token expires. */
export const tokenFunction = async () => ({ token: "t", expiresAt: new Date(Date.now() + 60_000) });
`;

const STRICT = {
  strict: true,
  noUncheckedIndexedAccess: true,
  exactOptionalPropertyTypes: true,
  noImplicitOverride: true,
  target: "ES2022",
  lib: ["ES2023", "DOM"],
  // The package's declarations are checked too: they must compile in the consumer's project, alone.
  types: [],
  skipLibCheck: false,
};

/** The README's snippet runs on Node: Node's types, from the repository (a project of yours has its own). */
const WITH_NODE_TYPES = {
  types: ["node"],
  typeRoots: [join(REPO, "node_modules", "@types")],
  skipLibCheck: true,
};

/** What `tsc` prints for the consumer's `files`, strict and with `options`: nothing if they compile. */
async function compile(name: string, files: string[], options: object): Promise<string> {
  const tsconfig = `tsconfig.${name}.json`;
  await writeFile(
    join(consumer, tsconfig),
    JSON.stringify({ compilerOptions: { ...STRICT, ...options }, files }),
  );
  const checked = await run(process.execPath, [TSC, "-p", tsconfig], { cwd: consumer }).catch(
    (error: { stdout: string }) => error,
  );
  return checked.stdout;
}

const NODENEXT = { module: "NodeNext", moduleResolution: "NodeNext", outDir: "out" };

describe("a TypeScript project that installed the tarball", () => {
  it.each([
    ["nodenext", NODENEXT],
    ["bundler", { module: "ESNext", moduleResolution: "Bundler", noEmit: true }],
  ])(
    "type-checks in strict mode with module resolution %s",
    async (name, options) => {
      expect(await compile(name, ["consumer.ts"], options)).toBe("");
    },
    60_000,
  );

  describe("against npm start", () => {
    let server: RunningServer;
    let dataDir: string;
    beforeAll(async () => {
      dataDir = await tempDataDir();
      server = await startServer({ PLANTS_DATA_DIR: dataDir });
    });
    afterAll(async () => {
      await server?.stop();
    });

    it("runs the README's snippet as written, creating id 2^63 - 1 exactly", async () => {
      const snippet = README_SNIPPET.exec(await readFile(join(REPO, "README.md"), "utf8"))?.[1];
      expect(snippet, "README.md's snippet starting '// create-plant.ts in your project'").toBeDefined();
      await writeFile(join(consumer, "create-plant.ts"), snippet ?? "");
      expect(await compile("readme", ["create-plant.ts"], { ...WITH_NODE_TYPES, ...NODENEXT })).toBe("");
      const local = JSON.parse(await readFile(join(dataDir, "client.json"), "utf8"));
      const { stdout } = await run(process.execPath, ["out/create-plant.js"], {
        cwd: consumer,
        env: {
          ...process.env,
          PLANT_STORE_BASE_URL: local.baseUrl,
          PLANT_STORE_CLIENT_ID: local.clientId,
          PLANT_STORE_CLIENT_SECRET: local.clientSecret,
          PLANT_STORE_TOKEN_URL: local.tokenUrl,
        },
      });
      expect(stdout).toBe("{ name: 'Fern', tag: 'fern' }\n");
      const { store } = JSON.parse(await readFile(join(dataDir, "server.json"), "utf8"));
      expect(await readStoredItem(store.endpoint, store.tableName, "9223372036854775807")).toEqual({
        id: { N: "9223372036854775807" },
        name: { S: "Fern" },
        tag: { S: "fern" },
      });
    });
  });
});
