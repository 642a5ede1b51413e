/**
 * Runs one fixture test file with a vitest of its own, under the project's vitest.config.ts (its
 * reporters, setup files and output settings), and gives back what that run printed: how `npm test`'s
 * output looks, checked on a fixture.
 */
import { execFile } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const REPO = fileURLToPath(new URL("../..", import.meta.url));

export async function vitestOutputOf(fixture: string): Promise<string> {
  const directory = await mkdtemp(join(tmpdir(), "plant-store-vitest-"));
  try {
    const config = join(directory, "vitest.config.mts");
    await writeFile(
      config,
      `import project from ${JSON.stringify(join(REPO, "vitest.config.ts"))};\n` +
        `export default { ...project, test: { ...project.test, projects: undefined, root: ${JSON.stringify(REPO)}, include: [${JSON.stringify(fixture)}] } };\n`,
    );
    // The child is a vitest of its own: none of this run's VITEST_* variables.
    const env = Object.fromEntries(
      Object.entries(process.env).filter(([name]) => !name.startsWith("VITEST")),
    );
    return await new Promise<string>((resolve) => {
      execFile(
        process.execPath,
        [join(REPO, "node_modules/vitest/vitest.mjs"), "run", "--config", config, "--no-color"],
        { cwd: REPO, env: { ...env, NO_COLOR: "1" }, timeout: 60_000 },
        (_error, stdout, stderr) => resolve(`${stdout}\n${stderr}`),
      );
    });
  } finally {
    await rm(directory, { recursive: true, force: true });
  }
}
