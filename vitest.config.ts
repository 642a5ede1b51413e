import { availableParallelism } from "node:os";
import { defineConfig } from "vitest/config";
import { BUNDLE_OPTIONS } from "./tools/bundle-options.ts";

// Tests run the code as it ships: aws-jwt-verify's WebCrypto build (the bundle's
// "browser" condition), not its node:https one, which refuses the loopback issuers tests use.
const shippedConditions = [...BUNDLE_OPTIONS.conditions, "module", "node", "development|production"];

export default defineConfig({
  resolve: { conditions: shippedConditions },
  ssr: { resolve: { conditions: shippedConditions } },
  test: {
    include: ["test/**/*.test.ts"],
    // Many files spend their time waiting on child processes (npm start, synth) and sockets, not on the
    // CPU: one worker more than the cores finishes the suite in ~35 s instead of ~60 s on two cores.
    maxWorkers: availableParallelism() + 1,
    testTimeout: 30_000,
    hookTimeout: 60_000,
    server: { deps: { inline: ["aws-jwt-verify"] } },
  },
});
