import { readFileSync } from "node:fs";
import { expect, it } from "vitest";

const read = (path: string) => readFileSync(new URL(`../../${path}`, import.meta.url), "utf8");

// Biome lists the source folders it checks (so that a data dir anywhere is never linted); a folder the
// type checker reads but Biome does not would go unlinted without anyone noticing.
it("lints every source folder that tsc type-checks", () => {
  const typeChecked = (JSON.parse(read("tsconfig.json")) as { include: string[] }).include.filter(
    (entry) => !entry.includes("."),
  );
  const linted = (JSON.parse(read("biome.json")) as { files: { includes: string[] } }).files.includes;
  expect(typeChecked.length).toBeGreaterThan(5);
  for (const folder of typeChecked) expect(linted, folder).toContain(`${folder}/**`);
});
