import { availableParallelism } from "node:os";
import { defineConfig } from "vitest/config";
import { HOOK_TIMEOUT_MS, TEST_TIMEOUT_MS } from "./test/support/timeouts.ts";

export default defineConfig({
  test: {
    // Many files spend their time waiting on child processes (npm start, npm pack, cfn-lint) and sockets,
    // not on the CPU: one worker more than the cores keeps the cores busy while they wait.
    maxWorkers: availableParallelism() + 1,
    // The results only: a test's log lines, its own and those of the code it runs (setup file below), are
    // printed beside its failure, and dropped when it passes.
    silent: "passed-only",
    setupFiles: ["test/support/quiet-output.ts"],
    // The bundle built once for every local run of the tests, and TMPDIR left as it was found.
    globalSetup: ["test/support/global-setup.ts"],
    // After the results: each skipped test, and why (the default reporter only counts them).
    reporters: ["default", "./test/support/skipped-tests-reporter.ts"],
    testTimeout: TEST_TIMEOUT_MS,
    hookTimeout: HOOK_TIMEOUT_MS,
    projects: [
      // A stack's first synthesis in a process costs some 3 s of CPU (aws-cdk-lib loading and warming up),
      // each later one a tenth of that: the infra files, which share no state, share their workers.
      { extends: true, test: { name: "infra", include: ["test/infra/**/*.test.ts"], isolate: false } },
      {
        extends: true,
        test: { name: "isolated", include: ["test/**/*.test.ts"], exclude: ["test/infra/**"] },
      },
    ],
  },
});
