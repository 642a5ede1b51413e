/** `npm start`: the local run of the API (see "Run it locally" in README.md). */

import { type CorsAllowOrigins, corsAllowOriginsFrom } from "./cors.ts";
import { type LocalApi, startLocalApi } from "./local-api.ts";
import { localClientPath } from "./local-client.ts";
import { dataDirFrom, dynamoDbEndpointFrom, portFrom, tableNameFrom } from "./local-settings.ts";

const dataDir = dataDirFrom(process.env);
// Requests are served from the moment the port opens, a few file writes before the banner can name
// everything: what they print (the function's log line, or the local run's own) waits for the banner.
const write = process.stdout.write;
const held: Parameters<typeof write>[] = [];
process.stdout.write = ((...args: Parameters<typeof write>) => held.push(args) > 0) as typeof write;
let api: LocalApi;
let corsAllowOrigins: CorsAllowOrigins | undefined;
try {
  corsAllowOrigins = corsAllowOriginsFrom(process.env.PLANTS_CORS_ALLOW_ORIGINS);
  api = await startLocalApi({
    port: portFrom(process.env),
    dataDir,
    dynamoDbEndpoint: dynamoDbEndpointFrom(process.env),
    tableName: tableNameFrom(process.env),
    corsAllowOrigins,
  });
} catch (error) {
  // A listen() error names the port it could not open (a file's EACCES has none).
  const { code, port } = error as NodeJS.ErrnoException & { port?: number };
  const message =
    port !== undefined && code === "EADDRINUSE"
      ? `port ${port} is in use (set PORT to another port)`
      : port !== undefined && code === "EACCES"
        ? `port ${port} may not be opened by this user (set PORT to a port above 1023)`
        : (error as Error).message;
  console.error(`npm start failed: ${message}`);
  process.exit(1);
}

// Before the banner: whoever reads it may stop the server at once, and must find it ready to stop cleanly.
// npm relays Ctrl-C too, so the signal may come twice: stop once, and let the first stop finish.
let stopping = false;
for (const signal of ["SIGINT", "SIGTERM"] as const) {
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
const cors = corsAllowOrigins
  ? `browsers on ${corsAllowOrigins.join(", ")} (PLANTS_CORS_ALLOW_ORIGINS)`
  : "off (PLANTS_CORS_ALLOW_ORIGINS unset)";
process.stdout.write = write;
console.log(`Plant Store API at ${plantsUrl}
  store:  ${storeDescription}, table ${api.store.tableName}
  token:  ${tokenCommand}
  try:    curl -H "Authorization: Bearer $(${tokenCommand})" -H 'content-type: application/json' -d '{"id":1,"name":"Fern"}' ${plantsUrl}
  client: id ${api.client.clientId}; its secret is in ${localClientPath(dataDir)} (mode 0600), never printed
          token URL ${api.client.tokenUrl}; from code: ${dataDirSetting}npm run example
  cors:   ${cors}; a refused browser origin is logged
  Ctrl-C stops it.`);
for (const args of held) write.apply(process.stdout, args);
