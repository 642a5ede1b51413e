/**
 * The local run: the deployable bundle behind an HTTP server that stands in for API Gateway, on the
 * embedded DynamoDB (dynalite, LevelDB files under the data dir) or on another DynamoDB endpoint.
 * Like the stack's HTTP API it has the routes of lambda/http/routes.ts, answers API Gateway's own 404 elsewhere and
 * its own 500 when the function fails; like the stack's Cognito it also serves POST /oauth2/token for the data
 * dir's app client (see oauth-token-endpoint.ts and local-client.ts). It never refuses a request because it is
 * starting: a request that comes as soon as the port opens waits until the handler is made and
 * `client.json` and `server.json` are written, so that whoever got an answer finds both.
 */
import { randomUUID } from "node:crypto";
import { once } from "node:events";
import { rm, writeFile } from "node:fs/promises";
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import type { Handler } from "../lambda/http/create-handler.ts";
import { matchRoute, routeKey } from "../lambda/http/routes.ts";
import { loadHandlerFactory } from "./bundled-handler.ts";
import { type CorsAllowOrigins, corsAnswerHeaders, originRefusal, preflightResult } from "./cors.ts";
import { checkStoreOpens, ensurePlantsTable, startDynalite } from "./dynamodb.ts";
import { handlerEnvironment, type StoreTarget, storeIdentity } from "./handler-environment.ts";
import {
  type HttpApiResult,
  jsonResult,
  MAX_INVOKE_PAYLOAD_BYTES,
  MAX_REQUEST_BYTES,
  readBody,
  splitTarget,
  toHttpApiEvent,
  writeHttpApiResult,
} from "./http-bridge.ts";
import { type LocalClient, localClientOf, saveLocalClient } from "./local-client.ts";
import { loadLocalIssuer } from "./local-issuer.ts";
import { createDataDir, DEFAULT_TABLE_NAME } from "./local-settings.ts";
import { answerTokenRequest, oauthError, TOKEN_PATH } from "./oauth-token-endpoint.ts";
import type { TokenIssuer } from "./token-issuer.ts";

const JWKS_PATH = "/.well-known/jwks.json";
/** In-flight requests get this long to finish on close before their connections are cut. */
const SHUTDOWN_GRACE_MS = 2000;
const GATEWAY_500 = jsonResult(500, { message: "Internal Server Error" });

/**
 * `<data dir>/server.json` while `npm start` runs: its URL, key set URL and store, for `npm run invoke`
 * (invoke.ts), since only one process at a time can open the embedded store's LevelDB files.
 */
export const serverRecordPath = (dataDir: string) => join(dataDir, "server.json");

export interface LocalApiOptions {
  /** 0 picks a free port. */
  port: number;
  dataDir: string;
  /** Another DynamoDB (AWS_ENDPOINT_URL_DYNAMODB) instead of the embedded one. */
  dynamoDbEndpoint?: string | undefined;
  tableName?: string | undefined;
  /**
   * Where the line of a request the function does not answer goes (API Gateway's 404, the token
   * endpoint, the key set, a body over the limit); console.log by default. A request the function
   * answers has its line already: the function's own log line, on stdout.
   */
  log?: (line: string) => void;
  /** Origins a browser may call from (PLANTS_CORS_ALLOW_ORIGINS); undefined answers no CORS, as the stack without corsAllowOrigins. */
  corsAllowOrigins?: CorsAllowOrigins | undefined;
  /**
   * Whether other processes learn of this server (server.json, and its URLs in client.json): true for
   * `npm start`, false for `npm run invoke`'s own short-lived one.
   */
  announce?: boolean;
}

export interface LocalApi {
  /** The base URL; unlike the stack's ApiUrl output, without `/plants`. */
  url: string;
  store: StoreTarget;
  /** The app client whose id and secret get tokens from POST /oauth2/token, as kept in `<data dir>/client.json`. */
  client: LocalClient;
  /** Runs the bundled handler on an event, as `npm run invoke` does. */
  invoke: Handler;
  /** Stops serving (in-flight requests get SHUTDOWN_GRACE_MS), then closes the store. */
  close(): Promise<void>;
}

export async function startLocalApi(options: LocalApiOptions): Promise<LocalApi> {
  const { dataDir, log = console.log, corsAllowOrigins, announce = true } = options;
  // A file where the dir should be, or a read-only dir, is named here rather than by a stack trace.
  await createDataDir(dataDir).catch((error: Error) => {
    throw new Error(`cannot use the data dir ${dataDir}: ${error.message}`);
  });
  const issuer = await loadLocalIssuer(dataDir);
  const { store, closeStore } = await openStore(options);
  // Settles once the handler is made and client.json and server.json are written: every request waits.
  let ready = (_serving: Serving) => {};
  const serving = new Promise<Serving>((resolve) => {
    ready = resolve;
  });
  const server = createServer((request, response) => {
    void serve(request, issuer, corsAllowOrigins, serving).then(({ result, line }) => {
      try {
        writeHttpApiResult(response, result);
      } catch (error) {
        // A result API Gateway could not send either (a bad status or header): the client gets a reset.
        console.error(`could not answer ${request.method} ${request.url}:`, error);
        response.destroy();
      }
      if (line) log(line);
    });
  });
  try {
    // A real table is the stack's to create; anything else (dynalite, DynamoDB Local) gets it made here.
    if (!isAwsEndpoint(store.endpoint)) {
      await ensurePlantsTable(store.endpoint, store.tableName, storeIdentity(store, process.env));
    }
    // Built and imported before the port opens; what is left (handlerFor) takes no time.
    const handlerFor = await loadHandlerFactory();
    // A client may close its side once its request is sent (`nc -N`, scripted HTTP/1.0-style clients) and
    // wait for the answer, which API Gateway gives: by default Node ends such a connection at once, so the
    // answer was lost though the plant was stored. Node's (undocumented, long-standing) switch keeps the
    // connection open until the answer is written, then ends it.
    (server as Server & { httpAllowHalfOpen: boolean }).httpAllowHalfOpen = true;
    server.listen(options.port, "127.0.0.1");
    await once(server, "listening");
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const jwksUrl = `${url}${JWKS_PATH}`;
    // The key set's URL names the port, known only now: a request that came meanwhile waits for this.
    const invoke = handlerFor(handlerEnvironment(store, { jwksUrl, jwks: issuer.jwks }));
    const urls = { baseUrl: url, tokenUrl: `${url}${TOKEN_PATH}` };
    const client = announce ? await saveLocalClient(dataDir, urls) : await localClientOf(dataDir, urls);
    const record = `${JSON.stringify({ url, jwksUrl, store }, null, 2)}\n`;
    if (announce) await writeFile(serverRecordPath(dataDir), record, { mode: 0o600 });
    ready({ handler: invoke, client });
    let closing: Promise<void> | undefined;
    return {
      url,
      store,
      client,
      invoke,
      close() {
        closing ??= (async () => {
          if (announce) await rm(serverRecordPath(dataDir), { force: true });
          await closeServer(server);
          // dynalite waits for its pending writes, then closes LevelDB.
          await closeStore();
        })();
        return closing;
      },
    };
  } catch (error) {
    await closeServer(server);
    await closeStore().catch(() => undefined);
    throw error;
  }
}

/** The embedded dynalite on the data dir, or the DynamoDB endpoint given instead. */
async function openStore({
  dataDir,
  dynamoDbEndpoint,
  tableName = DEFAULT_TABLE_NAME,
}: LocalApiOptions): Promise<{ store: StoreTarget; closeStore: () => Promise<void> }> {
  if (dynamoDbEndpoint) {
    return { store: { endpoint: dynamoDbEndpoint, embedded: false, tableName }, closeStore: async () => {} };
  }
  const location = join(dataDir, "dynamodb");
  // LevelDB takes one process at a time: a second one is refused here, naming LevelDB's lock.
  await checkStoreOpens(location);
  const dynalite = await startDynalite({ path: location });
  return { store: { endpoint: dynalite.endpoint, embedded: true, tableName }, closeStore: dynalite.close };
}

/** What a request needs that exists only once the port is known. */
interface Serving {
  handler: Handler;
  /** As saved in client.json. */
  client: LocalClient;
}

/** The answer to a request, and the line to log for it (none when the function logged its own). */
async function serve(
  request: IncomingMessage,
  issuer: TokenIssuer,
  corsAllowOrigins: CorsAllowOrigins | undefined,
  serving: Promise<Serving>,
): Promise<{ result: HttpApiResult; line: string | undefined }> {
  const startedAt = performance.now();
  const method = request.method ?? "GET";
  const { rawPath } = splitTarget(request);
  const origin = request.headers.origin;
  const isPreflight = corsAllowOrigins !== undefined && method === "OPTIONS";
  const requestId = randomUUID();
  let answer: Answer;
  try {
    answer = isPreflight
      ? { result: preflightResult(origin, corsAllowOrigins) }
      : await answerRequest(request, method, rawPath, requestId, issuer, await serving);
  } catch (error) {
    // Only reading the request can fail here: the client went away, or ended it mid-body.
    const result =
      rawPath === TOKEN_PATH
        ? oauthError("invalid_request")
        : errorResult(400, "the request could not be read");
    answer = { result, logNote: `the request could not be read: ${(error as Error).message}` };
  }
  // Like API Gateway, the gateway's CORS headers win over any the function set.
  const cors =
    corsAllowOrigins === undefined || isPreflight ? {} : corsAnswerHeaders(origin, corsAllowOrigins);
  // Each answer names its request, as API Gateway's (and Cognito's, for the token endpoint) do.
  const idHeader = rawPath === TOKEN_PATH ? "x-amzn-requestid" : "apigw-requestid";
  const result = { ...answer.result, headers: { [idHeader]: requestId, ...answer.result.headers, ...cors } };
  // A browser shows its page nothing of a refused origin but "Failed to fetch": say here what it was.
  const notes = [answer.logNote, originRefusal(origin, corsAllowOrigins)].filter(Boolean);
  if (answer.loggedByFunction && notes.length === 0) return { result, line: undefined };
  const took = `${result.statusCode} ${Math.round(performance.now() - startedAt)}ms`;
  const head = answer.loggedByFunction ? `${method} ${rawPath}` : `${method} ${rawPath} ${took}`;
  return { result, line: [head, ...notes].join(": ") };
}

interface Answer {
  result: HttpApiResult;
  /** The function answered, and wrote the request's log line. */
  loggedByFunction?: boolean;
  /** Why the gateway answered, for the request's log line. */
  logNote?: string;
}

async function answerRequest(
  request: IncomingMessage,
  method: string,
  rawPath: string,
  requestId: string,
  issuer: TokenIssuer,
  { handler, client }: Serving,
): Promise<Answer> {
  // In AWS the token endpoint is Cognito's, on its own domain; here it shares the port.
  if (method === "POST" && rawPath === TOKEN_PATH) {
    return { result: await answerTokenRequest(request, client, issuer) };
  }
  // GET of the key set is the local issuer's, for the handler (in AWS, the issuer serves its own).
  if (method === "GET" && rawPath === JWKS_PATH) return { result: jsonResult(200, issuer.jwks) };
  const route = matchRoute(method, rawPath)?.route;
  if (route === undefined) return { result: jsonResult(404, { message: "Not Found" }) };
  const body = await readBody(request);
  if (body === undefined) {
    return { result: errorResult(413, `the request body exceeds ${MAX_REQUEST_BYTES} bytes`) };
  }
  const event = toHttpApiEvent(request, body, routeKey(route), requestId);
  if (Buffer.byteLength(JSON.stringify(event)) > MAX_INVOKE_PAYLOAD_BYTES) {
    return {
      result: GATEWAY_500,
      logNote: `the event is over Lambda's ${MAX_INVOKE_PAYLOAD_BYTES}-byte invoke limit; the function did not run`,
    };
  }
  try {
    return { result: await handler(event), loggedByFunction: true };
  } catch (error) {
    // The handler promises never to throw; if it does, API Gateway answers its own 500: show why here.
    console.error(`the handler failed on request ${requestId}:`, error);
    return { result: GATEWAY_500 };
  }
}

function errorResult(status: number, message: string): HttpApiResult {
  return jsonResult(status, { error: status, message });
}

function isAwsEndpoint(endpoint: string): boolean {
  return /\.(amazonaws\.com(\.cn)?|api\.aws)$/i.test(new URL(endpoint).hostname);
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
