/**
 * Loaded into `npm start` with `--import`: while `${PLANTS_DATA_DIR}/fail-writes` exists, every LevelDB
 * write fails as a full disk makes it fail (classic-level's IO error). A full disk cannot be made here
 * (no mount, and root writes through permissions), so the fault is injected beneath dynalite.
 */
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";

export const FAIL_WRITES_FILE = "fail-writes";

const requireFromDynalite = createRequire(createRequire(import.meta.url).resolve("dynalite"));
const { Level } = requireFromDynalite("level") as { Level: { prototype: Record<string, unknown> } };
const dataDir = process.env.PLANTS_DATA_DIR ?? ".data";

for (const name of ["_put", "_batch"]) {
  const original = Level.prototype[name] as (...args: unknown[]) => Promise<unknown>;
  Level.prototype[name] = function (this: unknown, ...args: unknown[]) {
    if (!existsSync(join(dataDir, FAIL_WRITES_FILE))) return original.apply(this, args);
    const error = new Error(`IO error: ${join(dataDir, "dynamodb", "000005.log")}: No space left on device`);
    return Promise.reject(Object.assign(error, { code: "LEVEL_IO_ERROR" }));
  };
}
