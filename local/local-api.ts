/**
 * The local run: the deployable bundle behind an HTTP server that stands in for API Gateway, on the
 * embedded DynamoDB (dynalite, LevelDB files under the data dir) or on another DynamoDB endpoint.
 */
import { mkdir } from "node:fs/promises";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import type { Handler } from "../lambda/http/create-handler.ts";
import { loadBundledHandler } from "./bundled-handler.ts";
import { ensurePlantsTable, startDynalite } from "./dynamodb.ts";
import { handlerEnvironment, type StoreTarget, storeIdentity } from "./handler-environment.ts";
import {
  type HttpApiResult,
  RequestTooLargeError,
  readBody,
  splitTarget,
  toHttpApiEvent,
  writeHttpApiResult,
} from "./http-bridge.ts";
import { loadLocalIssuer } from "./local-issuer.ts";
import { DEFAULT_TABLE_NAME } from "./local-settings.ts";
import { findRunningServer, removeServerRecord, writeServerRecord } from "./server-record.ts";
import type { TokenIssuer } from "./token-issuer.ts";

export const PLANTS_PATH = "/plants";
export const JWKS_PATH = "/.well-known/jwks.json";
const PLANTS_ROUTE_KEY = `POST ${PLANTS_PATH}`;
/** In-flight requests get this long to finish on close before their connections are cut. */
const SHUTDOWN_GRACE_MS = 2000;

export interface LocalApiOptions {
  /** 0 picks a free port. */
  port: number;
  dataDir: string;
  /** Another DynamoDB (AWS_ENDPOINT_URL_DYNAMODB) instead of the embedded one. */
  dynamoDbEndpoint?: string | undefined;
  tableName?: string | undefined;
  /** Where the one line per request goes; console.log by default. */
  log?: (line: string) => void;
}

export interface LocalApi {
  /** The base URL; unlike the stack's ApiUrl output, without `/plants`. */
  url: string;
  store: StoreTarget;
  /** Runs the bundled handler on an event, as `npm run invoke` does. */
  invoke: Handler;
  close(): Promise<void>;
}

export async function startLocalApi(options: LocalApiOptions): Promise<LocalApi> {
  const { dataDir, log = console.log } = options;
  await mkdir(dataDir, { recursive: true, mode: 0o700 });
  const issuer = await loadLocalIssuer(dataDir);
  const { store, closeStore } = await openStore(options, issuer);
  let handler: Handler | undefined;
  const server = createServer((request, response) => {
    void serve(request, response, { issuer, handler, log });
  });
  try {
    // A real table is the stack's to create; anything else (dynalite, DynamoDB Local) gets it made here.
    if (!isAwsEndpoint(store.endpoint)) {
      await ensurePlantsTable(store.endpoint, store.tableName, storeIdentity(store, process.env));
    }
    const url = `http://127.0.0.1:${await listen(server, options.port)}`;
    const jwksUrl = `${url}${JWKS_PATH}`;
    // Recorded as soon as it listens (its key set answers already), so no other process opens the
    // store while the bundle builds.
    await writeServerRecord(dataDir, { pid: process.pid, url, jwksUrl, store });
    const invoke = await loadBundledHandler(handlerEnvironment(store, jwksUrl));
    handler = invoke;
    let closing: Promise<void> | undefined;
    return {
      url,
      store,
      invoke,
      close() {
        closing ??= (async () => {
          await closeServer(server);
          await removeServerRecord(dataDir, url);
          // Last: dynalite waits for its pending writes, then closes LevelDB.
          await closeStore();
        })();
        return closing;
      },
    };
  } catch (error) {
    await closeServer(server);
    await closeStore();
    throw error;
  }
}

/** The embedded dynalite on the data dir, or the DynamoDB endpoint given instead. */
async function openStore(
  { dataDir, dynamoDbEndpoint, tableName = DEFAULT_TABLE_NAME }: LocalApiOptions,
  issuer: TokenIssuer,
): Promise<{ store: StoreTarget; closeStore: () => Promise<void> }> {
  if (dynamoDbEndpoint) {
    return { store: { endpoint: dynamoDbEndpoint, embedded: false, tableName }, closeStore: async () => {} };
  }
  await refuseSharedStore(dataDir, issuer);
  const dynalite = await startDynalite({ path: join(dataDir, "dynamodb") });
  return { store: { endpoint: dynalite.endpoint, embedded: true, tableName }, closeStore: dynalite.close };
}

/** LevelDB takes one process at a time; dynalite would fail on the first request, obscurely. */
async function refuseSharedStore(dataDir: string, issuer: TokenIssuer): Promise<void> {
  const running = await findRunningServer(dataDir, issuer);
  if (running) {
    throw new Error(
      `a local API (process ${running.pid}, ${running.url}) already serves ${dataDir}; stop it, or set another PLANTS_DATA_DIR`,
    );
  }
}

interface ServeContext {
  issuer: TokenIssuer;
  handler: Handler | undefined;
  log: (line: string) => void;
}

async function serve(request: IncomingMessage, response: ServerResponse, context: ServeContext) {
  const startedAt = performance.now();
  const method = request.method ?? "GET";
  const { rawPath } = splitTarget(request);
  const { result, headers } = await answer(request, method, rawPath, context).catch((error: unknown) => ({
    // Only reading the request can fail here, for instance when the client goes away mid-body.
    result: errorResult(400, `the request could not be read: ${String(error)}`),
    headers: { connection: "close" },
  }));
  try {
    writeHttpApiResult(response, result, headers);
    context.log(`${method} ${rawPath} ${result.statusCode} ${Math.round(performance.now() - startedAt)}ms`);
  } catch (error) {
    // A result API Gateway could not send either (a bad status or header): the client gets a reset.
    console.error(`could not answer ${method} ${rawPath}:`, error);
    response.destroy();
  }
}

async function answer(
  request: IncomingMessage,
  method: string,
  rawPath: string,
  { issuer, handler }: ServeContext,
): Promise<{ result: HttpApiResult; headers?: Record<string, string> }> {
  if (rawPath === JWKS_PATH) {
    if (method !== "GET") return methodNotAllowed(method, rawPath, "GET");
    return { result: jsonResult(200, issuer.jwks) };
  }
  if (rawPath !== PLANTS_PATH) {
    return { result: errorResult(404, `no route for ${method} ${rawPath}; the API is ${PLANTS_ROUTE_KEY}`) };
  }
  if (method !== "POST") return methodNotAllowed(method, rawPath, "POST");
  if (!handler) {
    return { result: errorResult(503, "the local API is still starting"), headers: { "retry-after": "1" } };
  }
  let body: Buffer;
  try {
    body = await readBody(request);
  } catch (error) {
    if (!(error instanceof RequestTooLargeError)) throw error;
    return { result: errorResult(413, error.message), headers: { connection: "close" } };
  }
  const event = toHttpApiEvent(request, body, PLANTS_ROUTE_KEY);
  const requestId = event.requestContext.requestId;
  try {
    return { result: await handler(event), headers: { "apigw-requestid": requestId } };
  } catch (error) {
    // The handler promises never to throw; if it does, answer as API Gateway would, and show why.
    console.error(`the handler threw on request ${requestId}:`, error);
    return { result: errorResult(500, `internal error; request id ${requestId}`) };
  }
}

function methodNotAllowed(method: string, rawPath: string, allowed: string) {
  return {
    result: errorResult(405, `${method} is not allowed on ${rawPath}; use ${allowed}`),
    headers: { allow: allowed },
  };
}

function errorResult(status: number, message: string): HttpApiResult {
  return jsonResult(status, { error: status, message });
}

function jsonResult(status: number, body: unknown): HttpApiResult {
  return { statusCode: status, headers: { "content-type": "application/json" }, body: JSON.stringify(body) };
}

function isAwsEndpoint(endpoint: string): boolean {
  return /\.(amazonaws\.com(\.cn)?|api\.aws)$/i.test(new URL(endpoint).hostname);
}

function listen(server: Server, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () => resolve((server.address() as AddressInfo).port));
  });
}

function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => {
    if (!server.listening) return resolve();
    const cutConnections = setTimeout(() => server.closeAllConnections(), SHUTDOWN_GRACE_MS);
    server.close(() => {
      clearTimeout(cutConnections);
      resolve();
    });
    server.closeIdleConnections();
  });
}
