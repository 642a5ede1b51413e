/**
 * `npm run invoke -- <event.json>...`: runs the bundled handler on API Gateway event files, in order,
 * against the local store, and prints one result per file. `${LOCAL_TOKEN}` becomes a fresh local token.
 * Only one process can open the embedded store: when `npm start` runs on the same data dir, the handler
 * uses that server's store and key set; otherwise this command opens the store itself for the call.
 */
import { readFile } from "node:fs/promises";
import type { ApiGatewayEvent } from "../lambda/http/api-gateway.ts";
import type { Handler } from "../lambda/http/create-handler.ts";
import { loadHandlerFactory } from "./bundled-handler.ts";
import { handlerEnvironment, type StoreTarget } from "./handler-environment.ts";
import { serverRecordPath, startLocalApi } from "./local-api.ts";
import { loadLocalIssuer } from "./local-issuer.ts";
import { dataDirFrom, dynamoDbEndpointFrom, tableNameFrom } from "./local-settings.ts";
import type { TokenIssuer } from "./token-issuer.ts";

// biome-ignore lint/suspicious/noTemplateCurlyInString: the literal placeholder the event files carry
const TOKEN_PLACEHOLDER = "${LOCAL_TOKEN}";
const USAGE = "usage: npm run invoke -- <event.json>...   (ready ones: local/events/*.json)";

async function readEvent(path: string, issuer: TokenIssuer): Promise<ApiGatewayEvent> {
  const text = await readFile(path, "utf8").catch((error: Error) => {
    throw new Error(`cannot read ${path}: ${error.message}`);
  });
  let event: unknown;
  try {
    event = JSON.parse(text.replaceAll(TOKEN_PLACEHOLDER, await issuer.mint()));
  } catch (error) {
    throw new Error(`${path} is not an event (JSON): ${(error as Error).message}`);
  }
  if (typeof event !== "object" || event === null || Array.isArray(event)) {
    throw new Error(`${path} is not an event: an API Gateway event is a JSON object`);
  }
  return event as ApiGatewayEvent;
}

type RunningServer = { jwksUrl: string; store: StoreTarget };

/**
 * The server running for this data dir: its record exists and its URL answers with this dir's signing
 * key (a stale record, whose port another server may have taken since, is ignored).
 */
async function findRunningServer(dataDir: string, issuer: TokenIssuer): Promise<RunningServer | undefined> {
  try {
    const record = JSON.parse(await readFile(serverRecordPath(dataDir), "utf8")) as RunningServer;
    const response = await fetch(record.jwksUrl, { signal: AbortSignal.timeout(1000) });
    const served = (await response.json()) as { keys?: { kid?: string }[] };
    const ownKeyIds = issuer.jwks.keys.map((key) => key.kid);
    return served.keys?.some((key) => ownKeyIds.includes(key.kid)) ? record : undefined;
  } catch {
    return undefined;
  }
}

/** The handler on the data dir's store, the running server's or one opened here, and how to let it go. */
async function handlerOnDataDir(dataDir: string, issuer: TokenIssuer): Promise<Handler> {
  const running = await findRunningServer(dataDir, issuer);
  if (running) {
    const handlerFor = await loadHandlerFactory();
    return handlerFor(handlerEnvironment(running.store, { jwksUrl: running.jwksUrl, jwks: issuer.jwks }));
  }
  // Left open: the process exits once the results are out, and until then its port serves the key set
  // to the handler's confirming fetch (which would otherwise log the issuer as failing).
  const api = await startLocalApi({
    port: 0,
    dataDir,
    dynamoDbEndpoint: dynamoDbEndpointFrom(process.env),
    tableName: tableNameFrom(process.env),
    log: () => {},
    announce: false,
  });
  return api.invoke;
}

const eventPaths = process.argv.slice(2);
if (eventPaths.length === 0 || eventPaths.includes("--help")) {
  console.error(USAGE);
  process.exit(eventPaths.length === 0 ? 1 : 0);
}
// Logs go to stderr, as with `sam local invoke`, so that stdout carries the results alone.
const writeResult = process.stdout.write.bind(process.stdout);
process.stdout.write = process.stderr.write.bind(process.stderr);
try {
  const dataDir = dataDirFrom(process.env);
  const issuer = await loadLocalIssuer(dataDir);
  // Read first: a missing file or bad JSON fails before anything is written.
  const events = await Promise.all(eventPaths.map((path) => readEvent(path, issuer)));
  // In order, on one handler instance, as one warm function would.
  const handler = await handlerOnDataDir(dataDir, issuer);
  for (const event of events) writeResult(`${JSON.stringify(await handler(event), null, 2)}\n`);
  // Exits once the results are out: the handler's instance may keep timers running, as it would in Lambda.
  writeResult("", () => process.exit(0));
} catch (error) {
  console.error(`npm run invoke failed: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
}
