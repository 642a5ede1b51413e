/** `npm start`: the local run of the API (see "Run it locally" in README.md). */
import { type LocalApi, startLocalApi } from "./local-api.ts";
import { localClientPath } from "./local-client.ts";
import { dataDirFrom, dynamoDbEndpointFrom, portFrom, tableNameFrom } from "./local-settings.ts";

const dataDir = dataDirFrom(process.env);
// Requests are served from the moment the port opens, a few file writes before the banner can name
// everything: their lines wait for the banner, so that the banner is always the first thing printed.
const linesBeforeBanner: string[] = [];
let logRequest: (line: string) => void = (line) => linesBeforeBanner.push(line);
let api: LocalApi;
try {
  const port = portFrom(process.env);
  api = await startLocalApi({
    port,
    dataDir,
    dynamoDbEndpoint: dynamoDbEndpointFrom(process.env),
    tableName: tableNameFrom(process.env),
    log: (line) => logRequest(line),
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
const tokenCommand = `${process.env.PLANTS_DATA_DIR ? `PLANTS_DATA_DIR=${dataDir} ` : ""}npm run --silent token`;
const storeDescription = api.store.embedded
  ? `embedded DynamoDB (dynalite), data in ${dataDir}`
  : `DynamoDB at ${api.store.endpoint}`;
const daemonAddress = process.env.AWS_XRAY_DAEMON_ADDRESS?.trim();
const tracesLine = daemonAddress
  ? `  traces: every request sampled, its subsegments sent to udp ${daemonAddress} (print them: npm run traces)\n`
  : "";
console.log(`Plant Store API at ${plantsUrl}
  store:  ${storeDescription}, table ${api.store.tableName}
  token:  ${tokenCommand}
  try:    curl -H "Authorization: Bearer $(${tokenCommand})" -H 'content-type: application/json' -d '{"id":1,"name":"Fern"}' ${plantsUrl}
  client: id ${api.client.clientId}, secret ${api.client.clientSecret} (a local dev credential, kept in ${localClientPath(dataDir)})
          token URL ${api.client.tokenUrl}; from code: ${process.env.PLANTS_DATA_DIR ? `PLANTS_DATA_DIR=${dataDir} ` : ""}npm run example
${tracesLine}  Ctrl-C stops it.`);
logRequest = console.log;
for (const line of linesBeforeBanner) console.log(line);
