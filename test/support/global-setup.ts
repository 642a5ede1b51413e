/**
 * Once per `vitest run`, before any test file: builds the deployable bundle, so that each `npm start`,
 * `npm run invoke` and in-process local run of the tests imports it instead of building it again
 * (local/bundled-handler.ts reads PLANT_STORE_BUILT_BUNDLE). After the run: removes tsx's cache folder
 * from TMPDIR when the run made it (the commands the tests start run on tsx), so that nothing is left.
 */
import { existsSync, rmSync } from "node:fs";
import { tmpdir, userInfo } from "node:os";
import { join } from "node:path";
import { BUILT_BUNDLE_VARIABLE } from "../../local/bundled-handler.ts";
import { BUNDLE_PATH, buildBundle } from "../../tools/build-bundle.ts";

export async function setup(): Promise<() => void> {
  // A vitest started by a test of this run (test/support/vitest-fixture-run.ts) finds it built already.
  if (process.env[BUILT_BUNDLE_VARIABLE] !== BUNDLE_PATH)
    process.env[BUILT_BUNDLE_VARIABLE] = await buildBundle();
  const tsxCache = join(tmpdir(), `tsx-${userInfo().uid}`);
  const tsxCacheWasThere = existsSync(tsxCache);
  return () => {
    if (!tsxCacheWasThere) rmSync(tsxCache, { recursive: true, force: true });
  };
}
