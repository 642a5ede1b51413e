/**
 * `npm test` prints results only: what a passing test (or the code it runs) writes to stdout and stderr
 * is dropped, and what a failing one wrote is shown beside its failure (vitest.config.ts,
 * test/support/quiet-output.ts). Checked on a fixture run by vitest with the project's configuration.
 */
import { expect, it } from "vitest";
import { vitestOutputOf } from "../support/vitest-fixture-run.ts";

it("drops a passing test's output and shows a failing test's beside its failure", async () => {
  const output = await vitestOutputOf("test/tools/fixtures/noisy-output.fixture.ts");
  expect(output).toContain("1 failed");
  expect(output).toContain("1 passed");
  expect(output).not.toContain("written by a passing test");
  expect(output).not.toContain("stderr of a passing test");
  const failingLine = output.indexOf("written by a failing test");
  expect(failingLine, output).toBeGreaterThan(-1);
  expect(output.lastIndexOf("fails, writing to stdout", failingLine), output).toBeGreaterThan(-1);
});
