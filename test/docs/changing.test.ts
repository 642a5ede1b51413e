/**
 * docs/CHANGING.md walks through the common changes by the files they touch and the tests that prove them:
 * each path it names must exist, each test title it quotes must be a test, each npm script it names must
 * be one, so that the walk-through fails here the day the code moves away from it.
 */
import { existsSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";

const ROOT = new URL("../../", import.meta.url);
const page = readFileSync(new URL("docs/CHANGING.md", ROOT), "utf8");
const read = (path: string) => readFileSync(new URL(path, ROOT), "utf8");

/** Every `a/b.ts`-like code span: a path in the repository, with a folder and an extension. */
const namedPaths = [...page.matchAll(/`([\w.-]+(?:\/[\w.-]+)+\.(?:ts|js|md|yaml))`/g)].map(
  (match) => match[1] ?? "",
);
const namedFolders = [...page.matchAll(/`([\w-]+(?:\/[\w-]+)*\/)`/g)].map((match) => match[1] ?? "");

describe("docs/CHANGING.md", () => {
  it("names files and folders that exist", () => {
    expect(namedPaths.length).toBeGreaterThan(15);
    for (const path of [...namedPaths, ...namedFolders])
      expect(existsSync(new URL(path, ROOT)), path).toBe(true);
  });

  it("quotes test titles that the test file it names has", () => {
    const quoted = [...page.matchAll(/"([^"]+)" \(the dashboard\)/g)].map((match) => match[1] ?? "");
    expect(quoted.length).toBeGreaterThan(0);
    for (const title of quoted) expect(read("test/infra/plant-store-stack.test.ts")).toContain(`"${title}"`);
  });

  it("names npm scripts that package.json has", () => {
    const scripts = Object.keys((JSON.parse(read("package.json")) as { scripts: object }).scripts);
    const named = [...page.matchAll(/`npm (?:run )?([\w:-]+)`/g)].map((match) => match[1] ?? "");
    expect(named).toEqual(expect.arrayContaining(["generate", "test"]));
    for (const script of named) expect(scripts, script).toContain(script);
  });

  it("sends a new route to the files the README's layout table sends it to", () => {
    const row = read("README.md")
      .split("\n")
      .find((line) => line.includes("**add a route**"));
    const folder = /^\| `([\w/-]+\/)`/.exec(row ?? "")?.[1];
    const named = [...(row?.split("**add a route**")[1] ?? "").matchAll(/`([\w.-]+\.ts)`/g)].map(
      (match) => `${folder}${match[1]}`,
    );
    expect(named.length).toBeGreaterThan(1);
    const section = page.split("## Add a route")[1]?.split("\n## ")[0] ?? "";
    const walkedThrough = [...section.matchAll(/^\d\. `(lambda\/http\/[\w.-]+\.ts)`/gm)].map(
      (match) => match[1],
    );
    expect(named.sort()).toEqual(walkedThrough.sort());
  });

  it("names the code identifiers the steps edit, where they are", () => {
    const identifiers: [string, string][] = [
      ["ROUTES", "lambda/http/routes.ts"],
      ["OPERATIONS", "lambda/http/operations.ts"],
      ["PLANT_FIELDS", "lambda/generated/plant-schema.ts"],
      ["NEW_PLANT_PROPERTIES", "client/generated/openapi.ts"],
      ["PlantStore", "lambda/store/dynamodb-plant-store.ts"],
      ["METRIC_NAMES", "lambda/metrics.ts"],
      ["alarmOnSum", "infra/alarms.ts"],
      ["rollbackAlarms", "infra/plant-store-stack.ts"],
      ["STORE_MAX_ATTEMPTS", "lambda/config.ts"],
    ];
    for (const [identifier, path] of identifiers) {
      expect(page, identifier).toContain(`\`${identifier}`);
      expect(read(path), `${identifier} in ${path}`).toContain(identifier);
    }
  });
});
