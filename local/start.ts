/** `npm start`: the local run of the API (see "Run it locally" in README.md). */

import { type LocalApi, startLocalApi } from "./local-api.ts";
import { localClientPath } from "./local-client.ts";
import {
  corsSettingFrom,
  dataDirFrom,
  dynamoDbEndpointFrom,
  portFrom,
  tableNameFrom,
} from "./local-settings.ts";
import {
  describeReplicatedWriteConflicts,
  type ReplicatedWriteConflicts,
  replicatedWriteConflictsFrom,
} from "./replicated-write-conflicts.ts";

const dataDir = dataDirFrom(process.env);
// Requests are served from the moment the port opens, a few file writes before the banner can name
// everything: their lines (the function's log line, or the local run's own) wait for the banner, so that
// the banner is always the first thing printed.
const outputBeforeBanner = holdStdout();
let api: LocalApi;
let corsAllowOrigins: readonly string[] | undefined;
let replicatedWriteConflicts: ReplicatedWriteConflicts | undefined;
try {
  const port = portFrom(process.env);
  corsAllowOrigins = corsSettingFrom(process.env);
  replicatedWriteConflicts = replicatedWriteConflictsFrom(process.env);
  api = await startLocalApi({
    port,
    dataDir,
    dynamoDbEndpoint: dynamoDbEndpointFrom(process.env),
    tableName: tableNameFrom(process.env),
    corsAllowOrigins,
    replicatedWriteConflicts,
  }).catch((error: unknown) => {
    if ((error as NodeJS.ErrnoException).code === "EADDRINUSE") {
      throw new Error(`port ${port} is in use (set PORT to another port)`);
    }
    if ((error as NodeJS.ErrnoException).code === "EACCES") {
      throw new Error(`port ${port} may not be opened by this user (set PORT to a port above 1023)`);
    }
    throw error;
  });
} catch (error) {
  console.error(`npm start failed: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
}

// Before the banner: whoever reads it may stop the server at once, and must find it ready to stop cleanly.
let stopping = false;
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  // npm relays Ctrl-C too, so the signal may come twice: stop once, and let the first stop finish.
  process.on(signal, () => {
    if (stopping) return;
    stopping = true;
    console.log(`${signal}: stopping`);
    api.close().then(
      () => process.exit(0),
      (error: unknown) => {
        console.error("could not stop cleanly:", error);
        process.exit(1);
      },
    );
  });
}

const plantsUrl = `${api.url}/plants`;
/** The data dir for a command to paste into a shell: quoted when a space or a quote would split it. */
const dataDirSetting = process.env.PLANTS_DATA_DIR
  ? `PLANTS_DATA_DIR=${/^[\w@%+=:,./-]+$/.test(dataDir) ? dataDir : `'${dataDir.replaceAll("'", "'\\''")}'`} `
  : "";
const tokenCommand = `${dataDirSetting}npm run --silent token`;
const storeDescription = api.store.embedded
  ? `embedded DynamoDB (dynalite), data in ${dataDir}`
  : `DynamoDB at ${api.store.endpoint}`;
const conflictsLine = replicatedWriteConflicts
  ? `  store faults: ${describeReplicatedWriteConflicts(replicatedWriteConflicts)}\n`
  : "";
outputBeforeBanner.releaseAfter(`Plant Store API at ${plantsUrl}
  store:  ${storeDescription}, table ${api.store.tableName}
  token:  ${tokenCommand}
  try:    curl -H "Authorization: Bearer $(${tokenCommand})" -H 'content-type: application/json' -d '{"id":1,"name":"Fern"}' ${plantsUrl}
  client: id ${api.client.clientId}; its secret is in ${localClientPath(dataDir)} (mode 0600), never printed
          token URL ${api.client.tokenUrl}; from code: ${dataDirSetting}npm run example
  cors:   ${corsAllowOrigins ? `browsers on ${corsAllowOrigins.join(", ")} (PLANTS_CORS_ALLOW_ORIGINS)` : "off (PLANTS_CORS_ALLOW_ORIGINS unset)"}; a refused browser origin is logged
${conflictsLine}  Ctrl-C stops it.`);

/** Holds what is written to stdout until `releaseAfter(first)` prints `first`, then all it held. */
function holdStdout(): { releaseAfter(first: string): void } {
  const write = process.stdout.write;
  const held: Parameters<typeof write>[] = [];
  process.stdout.write = ((...args: Parameters<typeof write>) => {
    held.push(args);
    return true;
  }) as typeof write;
  return {
    releaseAfter(first) {
      process.stdout.write = write;
      console.log(first);
      for (const args of held) write.apply(process.stdout, args);
    },
  };
}
