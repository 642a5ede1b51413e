/**
 * `npm test` prints results only: what a passing test (or the code it runs) writes to stdout and stderr
 * is dropped, and what a failing one wrote is shown beside its failure (vitest.config.ts,
 * test/support/quiet-output.ts). Checked on a fixture run by vitest with the project's configuration.
 */
import { execFile } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, expect, it } from "vitest";

const REPO = fileURLToPath(new URL("../..", import.meta.url));
const FIXTURE = "test/tools/fixtures/noisy-output.fixture.ts";
let directory: string | undefined;

afterAll(async () => {
  if (directory) await rm(directory, { recursive: true, force: true });
});

it("drops a passing test's output and shows a failing test's beside its failure", async () => {
  directory = await mkdtemp(join(tmpdir(), "plant-store-quiet-"));
  const config = join(directory, "vitest.config.ts");
  await writeFile(
    config,
    `import project from ${JSON.stringify(join(REPO, "vitest.config.ts"))};\n` +
      `export default { ...project, test: { ...project.test, root: ${JSON.stringify(REPO)}, include: [${JSON.stringify(FIXTURE)}] } };\n`,
  );
  // The child is a vitest of its own: none of this run's VITEST_* variables.
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith("VITEST")));
  const output = await new Promise<string>((resolve) => {
    execFile(
      process.execPath,
      [join(REPO, "node_modules/vitest/vitest.mjs"), "run", "--config", config, "--no-color"],
      { cwd: REPO, env: { ...env, NO_COLOR: "1" }, timeout: 60_000 },
      (_error, stdout, stderr) => resolve(`${stdout}\n${stderr}`),
    );
  });
  expect(output).toContain("1 failed");
  expect(output).toContain("1 passed");
  expect(output).not.toContain("written by a passing test");
  expect(output).not.toContain("stderr of a passing test");
  const failingLine = output.indexOf("written by a failing test");
  expect(failingLine, output).toBeGreaterThan(-1);
  expect(output.lastIndexOf("fails, writing to stdout", failingLine), output).toBeGreaterThan(-1);
});
