/**
 * A vitest reporter beside the default one (vitest.config.ts): after the summary, one line per skipped
 * test or skipped group, with why. The default reporter counts skipped tests but names none, and a
 * console line written where the skip is decided is dropped with the passing output (`silent:
 * "passed-only"`). The reason is the skip's note (`context.skip("why")`) or, for `describe.skipIf`, in the
 * group's own name. Quiet when the run was narrowed by a name pattern (`-t`), which skips the rest itself.
 */
import type { Reporter, TestCase, TestModule, TestSuite, Vitest } from "vitest/node";

export default class SkippedTestsReporter implements Reporter {
  #vitest: Vitest | undefined;

  onInit(vitest: Vitest): void {
    this.#vitest = vitest;
  }

  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    const vitest = this.#vitest;
    if (!vitest || vitest.config.testNamePattern) return;
    const lines = testModules.flatMap((testModule) => skippedLines(testModule, vitest.config.root));
    if (lines.length === 0) return;
    vitest.logger.log(["", " Skipped, and why:", ...lines.map((line) => `   ↓ ${line}`), ""].join("\n"));
  }
}

/** One line per skipped test, or per outermost skipped group for the tests a skipped group holds. */
function skippedLines(testModule: TestModule, root: string): string[] {
  const file = testModule.moduleId.startsWith(`${root}/`)
    ? testModule.moduleId.slice(root.length + 1)
    : testModule.moduleId;
  const groups = new Map<TestCase | TestSuite, number>();
  for (const test of testModule.children.allTests("skipped")) {
    if (test.options.mode === "todo") continue;
    const entity = outermostSkippedSuite(test) ?? test;
    groups.set(entity, (groups.get(entity) ?? 0) + 1);
  }
  return [...groups].map(([entity, count]) => {
    const result = entity.type === "test" ? entity.result() : undefined;
    const note = result?.state === "skipped" ? result.note : undefined;
    const tests = entity.type === "suite" ? ` (${count} test${count === 1 ? "" : "s"})` : "";
    return `${file} > ${entity.fullName}${note ? ` [${note}]` : ""}${tests}`;
  });
}

function outermostSkippedSuite(test: TestCase): TestSuite | undefined {
  let outermost: TestSuite | undefined;
  for (let parent = test.parent; parent.type === "suite"; parent = parent.parent) {
    if (parent.options.mode === "skip") outermost = parent;
  }
  return outermost;
}
