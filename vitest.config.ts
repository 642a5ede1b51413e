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
    testTimeout: 30_000,
    hookTimeout: 60_000,
    server: { deps: { inline: ["aws-jwt-verify"] } },
  },
});
