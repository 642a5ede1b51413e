/**
 * A test skipped in `npm test` says why in its output (test/support/skipped-tests-reporter.ts): the
 * default reporter only counts skipped tests, and the quiet output drops what a skipped file logs.
 * Checked on a fixture run by vitest with the project's configuration.
 */
import { expect, it } from "vitest";
import { vitestOutputOf } from "../support/vitest-fixture-run.ts";

it("names each skipped test or group with its reason, after the results", async () => {
  const file = "test/tools/fixtures/skipped-tests.fixture.ts";
  const output = await vitestOutputOf(file);
  expect(output).toContain("1 passed | 3 skipped");
  const listed = output
    .split(" Skipped, and why:\n")[1]
    ?.split("\n")
    .filter((line) => line.startsWith("   ↓ "));
  expect(listed, output).toEqual([
    `   ↓ ${file} > a group that needs a tool (skipped: the tool is missing) (2 tests)`,
    `   ↓ ${file} > decides at run time [the service it needs does not answer]`,
  ]);
});
