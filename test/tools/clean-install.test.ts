/**
 * `npm ci` warns about every install script that package.json's `allowScripts` does not cover (npm 12
 * will refuse to run them): each package of the lockfile that has one is reviewed there, allowed or denied.
 */
import { readFileSync } from "node:fs";
import { expect, it } from "vitest";

const read = (path: string) => JSON.parse(readFileSync(new URL(`../../${path}`, import.meta.url), "utf8"));

it("covers every install script of the lockfile with allowScripts", () => {
  const lock = read("package-lock.json") as {
    packages: Record<string, { version?: string; hasInstallScript?: boolean }>;
  };
  const allowScripts =
    (read("package.json") as { allowScripts?: Record<string, boolean> }).allowScripts ?? {};
  const withScripts = Object.entries(lock.packages)
    .filter(([, entry]) => entry.hasInstallScript)
    .map(([path, entry]) => ({ name: path.replace(/^.*node_modules\//, ""), version: entry.version }));
  expect(withScripts.length).toBeGreaterThan(0);
  for (const { name, version } of withScripts) {
    const reviewed = name in allowScripts || `${name}@${version}` in allowScripts;
    expect(reviewed, `${name}@${version} has an install script not in allowScripts`).toBe(true);
  }
});
