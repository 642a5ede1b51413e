/**
 * A server for the load benchmark, in its own process so that autocannon does not share its event
 * loop: `local-api` (what `npm start` runs: the bundle behind the HTTP bridge, on embedded dynalite)
 * or `dynalite` alone, both keeping their data in LevelDB under the given folder. It reports where it
 * listens over IPC and closes when the parent sends any message.
 */
import { join } from "node:path";
import { ensurePlantsTable, startDynalite } from "../local/dynamodb.ts";
import { PLANTS_PATH, startLocalApi } from "../local/local-api.ts";
import { mintLocalToken } from "../local/local-issuer.ts";
import { DEFAULT_TABLE_NAME } from "../local/local-settings.ts";

export type LoadTargetKind = "local-api" | "dynalite";

export interface LoadTargetAddress {
  url: string;
  /** A valid access token for the local API; none for dynalite. */
  token?: string;
}

async function start(kind: LoadTargetKind, dataDir: string): Promise<() => Promise<void>> {
  if (kind === "local-api") {
    const api = await startLocalApi({ port: 0, dataDir });
    report({ url: `${api.url}${PLANTS_PATH}`, token: await mintLocalToken(dataDir) });
    return api.close;
  }
  const dynamoDb = await startDynalite({ path: join(dataDir, "dynamodb") });
  await ensurePlantsTable(dynamoDb.endpoint, DEFAULT_TABLE_NAME);
  report({ url: dynamoDb.endpoint });
  return dynamoDb.close;
}

function report(address: LoadTargetAddress): void {
  process.send?.(address);
}

const [kind, dataDir] = process.argv.slice(2);
if (kind !== "local-api" && kind !== "dynalite") throw new Error(`unknown load target '${kind}'`);
if (dataDir === undefined) throw new Error("the data folder is required");
const close = await start(kind, dataDir);
// A message asks it to stop; so does losing its parent (killed, crashed), lest it hold its port and data.
const stop = (): void => {
  close().then(
    () => process.exit(0),
    (error: unknown) => {
      console.error(error);
      process.exit(1);
    },
  );
};
process.once("message", stop);
process.once("disconnect", stop);
