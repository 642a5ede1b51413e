/**
 * AWS's CloudFormation linter on every configuration docs/DEPLOY.md documents (each `npx cdk deploy` line,
 * every stack it synthesizes): no error and no warning. All templates go to one cfn-lint run, which
 * takes a couple of seconds where one run per template would take half a minute.
 *
 * cfn-lint is a Python tool (`pip install cfn-lint==1.51.0`). Outside CI a machine without it skips this
 * file and says so; in CI (CI set, as .ci/run sets it) a missing cfn-lint fails the run.
 */
import { execFile, execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { documentedConfigurations } from "../support/documented-configurations.ts";
import { synthesizedTemplates } from "../support/synthesize.ts";

const execFileAsync = promisify(execFile);
/**
 * When cfn-lint is taken for hung, and stopped. Linting some thirty templates takes about 12 s alone, and
 * is CPU-bound: beside the other test files (and their child processes) on a busy two-core machine it took
 * over 180 s, which only a hang should fail.
 */
const LINT_HANG_MS = 900_000;

/** The version this project's templates were checked with; a newer one may add rules. */
const CFN_LINT_VERSION = "1.51.0";

function installedCfnLintVersion(): string | undefined {
  try {
    return execFileSync("cfn-lint", ["--version"], { encoding: "utf8" }).trim();
  } catch {
    return undefined;
  }
}

const installedVersion = installedCfnLintVersion();
const cfnLintMissing = installedVersion === undefined;
if (cfnLintMissing && process.env.CI) {
  throw new Error(`cfn-lint is missing in CI: pip install cfn-lint==${CFN_LINT_VERSION}`);
}
const SKIP_REASON = `cfn-lint is not installed (pip install cfn-lint==${CFN_LINT_VERSION})`;
if (cfnLintMissing) {
  // Straight to the terminal: the test setup routes console output to the tests, and vitest prints a
  // skipped file's console output nowhere.
  writeSync(2, `test/infra/cfn-lint.test.ts skipped: ${SKIP_REASON}\n`);
}

interface CfnLintMatch {
  Filename: string;
  Level: string;
  Message: string;
  Rule: { Id: string };
  Location: { Path?: (string | number)[] };
}

const title = `cfn-lint on every documented configuration${cfnLintMissing ? ` (skipped: ${SKIP_REASON})` : ""}`;

describe.skipIf(cfnLintMissing)(title, () => {
  const directory = mkdtempSync(join(tmpdir(), "plant-store-cfn-lint-"));
  afterAll(() => rmSync(directory, { recursive: true, force: true }));

  /** One template file per stack of each configuration, named after both. */
  const files = documentedConfigurations().flatMap((context, index) =>
    synthesizedTemplates(context).map(({ stackName, template }) => {
      const file = join(directory, `configuration-${index}-${stackName}.template.json`);
      writeFileSync(file, JSON.stringify(template, null, 1));
      return { file, context };
    }),
  );

  it(`is the version the templates were checked with (${CFN_LINT_VERSION})`, () => {
    expect(installedVersion).toBe(`cfn-lint ${CFN_LINT_VERSION}`);
  });

  it(
    "finds no error and no warning in any template",
    async () => {
      expect(files.length).toBeGreaterThan(10);
      // Exit code 0 when nothing is found; 2 (errors), 4 (warnings) or 6 (both) otherwise, with JSON output.
      const output = await execFileAsync("cfn-lint", ["--format", "json", ...files.map(({ file }) => file)], {
        maxBuffer: 16 * 1024 * 1024,
        timeout: LINT_HANG_MS,
        killSignal: "SIGKILL",
      }).catch((error: { code?: number; stdout?: string; stderr?: string }) => {
        if (typeof error.stdout !== "string" || error.stdout === "") throw error;
        return { stdout: error.stdout };
      });
      const matches = JSON.parse(output.stdout || "[]") as CfnLintMatch[];
      const findings = matches.map((match) => ({
        configuration: files.find(({ file }) => file === match.Filename)?.context,
        level: match.Level,
        rule: match.Rule.Id,
        message: match.Message,
        at: (match.Location.Path ?? []).join("/"),
      }));
      expect(findings).toEqual([]);
    },
    LINT_HANG_MS + 10_000,
  );
});
