/**
 * The local run: the deployable bundle behind an HTTP server that stands in for API Gateway, on the
 * embedded DynamoDB (dynalite, LevelDB files under the data dir) or on another DynamoDB endpoint.
 * Like the stack's HTTP API it has the routes of lambda/http/routes.ts, answers API Gateway's own 404 elsewhere and
 * its own 500 when the function fails; like the stack's Cognito it also serves POST /oauth2/token for the data
 * dir's app client (see oauth-token-endpoint.ts and local-client.ts). It never refuses a request because it is
 * starting: a request that comes as soon as the port opens waits until the handler is made and
 * `client.json` and `server.json` are written, so that whoever got an answer finds both. One process serves
 * a data dir at a time (see data-dir-lock.ts).
 */
import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { join } from "node:path";
import type { Duplex } from "node:stream";
import type { Handler } from "../lambda/http/create-handler.ts";
import { matchRoute, routeKey, routeOf } from "../lambda/http/routes.ts";
import { loadHandlerFactory } from "./bundled-handler.ts";
import { type CorsAllowOrigins, corsAnswerHeaders, originRefusal, preflightResult } from "./cors.ts";
import { claimDataDir, DataDirTakenError } from "./data-dir-lock.ts";
import { ensurePlantsTable, startDynalite } from "./dynamodb.ts";
import { answerStoreFaults, checkStoreOpens } from "./embedded-store-faults.ts";
import { handlerEnvironment, type StoreTarget, storeIdentity } from "./handler-environment.ts";
import {
  BODY_CUT_SHORT,
  type HttpApiResult,
  MAX_INVOKE_PAYLOAD_BYTES,
  RequestTooLargeError,
  readBody,
  splitTarget,
  toHttpApiEvent,
  writeHttpApiResult,
} from "./http-bridge.ts";
import { type LocalClient, localClientOf, saveLocalClient } from "./local-client.ts";
import { loadLocalIssuer } from "./local-issuer.ts";
import { createDataDir, DEFAULT_TABLE_NAME } from "./local-settings.ts";
import {
  answerTokenRequest,
  MAX_TOKEN_REQUEST_BYTES,
  oauthError,
  TOKEN_PATH,
} from "./oauth-token-endpoint.ts";
import { type ReplicatedWriteConflicts, startConflictingFront } from "./replicated-write-conflicts.ts";
import { removeServerRecord, writeServerRecord } from "./server-record.ts";
import type { TokenIssuer } from "./token-issuer.ts";

export const PLANTS_PATH = routeOf("createPlant").path;
export const JWKS_PATH = "/.well-known/jwks.json";
/** In-flight requests get this long to finish on close before their connections are cut. */
const SHUTDOWN_GRACE_MS = 2000;

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
  /** Conflicts the embedded store answers as a multi-Region table would (PLANTS_REPLICATED_WRITE_CONFLICTS). */
  replicatedWriteConflicts?: ReplicatedWriteConflicts | undefined;
  /**
   * Whether other processes learn of this server (server.json, and its URLs in client.json): true for
   * `npm start`. `npm run invoke`'s own short-lived one says nothing, so that another invoke waits for the
   * data dir rather than send its events to a store about to close.
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
  /**
   * Closes the store and gives the data dir up, leaving the port open: `npm run invoke`'s ending, which
   * exits right after. The handler confirms its delivered key set with a fetch after its first answer, and
   * that fetch finds the key set served, instead of a closed port it would log as the issuer failing.
   */
  releaseDataDir(): Promise<void>;
  /** Stops serving (in-flight requests get SHUTDOWN_GRACE_MS), then releases the data dir. */
  close(): Promise<void>;
}

export async function startLocalApi(options: LocalApiOptions): Promise<LocalApi> {
  const { dataDir, log = console.log } = options;
  const cannotUse = (error: unknown) => {
    if (error instanceof DataDirTakenError) throw error;
    throw new Error(`cannot use the data dir ${dataDir}: ${(error as Error).message}`);
  };
  // A file where the dir should be, or a read-only dir, is named here rather than by a stack trace.
  await createDataDir(dataDir).catch(cannotUse);
  const claim = await claimDataDir(dataDir).catch(cannotUse);
  const undo: (() => Promise<void>)[] = [claim.release];
  const serving = deferred<Serving>();
  try {
    const issuer = await loadLocalIssuer(dataDir);
    const { store, closeStore } = await openStore(options);
    undo.unshift(closeStore);
    // A real table is the stack's to create; anything else (dynalite, DynamoDB Local) gets it made here.
    if (!isAwsEndpoint(store.endpoint)) {
      await ensurePlantsTable(store.endpoint, store.tableName, storeIdentity(store, process.env));
    }
    // Built and imported before the port opens; what is left (handlerFor) takes no time.
    const handlerFor = await loadHandlerFactory();
    const server = createServer((request, response) => {
      const bodyUnreadable = new AbortController();
      answering.set(request.socket, { response, bodyUnreadable });
      response.once("close", () => answering.delete(request.socket));
      void serve(request, response, {
        issuer,
        serving: serving.promise,
        log,
        corsAllowOrigins: options.corsAllowOrigins,
        bodyUnreadable: bodyUnreadable.signal,
      });
    });
    server.on("clientError", answerClientError);
    // A client may close its side once its request is sent (`nc -N`, scripted HTTP/1.0-style clients) and
    // wait for the answer, which API Gateway gives: by default Node ends such a connection at once, so the
    // answer was lost though the plant was stored. Node's (undocumented, long-standing) switch keeps the
    // connection open until the answer is written, then ends it.
    (server as Server & { httpAllowHalfOpen: boolean }).httpAllowHalfOpen = true;
    undo.unshift(() => closeServer(server));
    const url = `http://127.0.0.1:${await listen(server, options.port)}`;
    const jwksUrl = `${url}${JWKS_PATH}`;
    // The key set's URL names the port, known only now: a request that came meanwhile waits for this.
    const environment = handlerEnvironment(store, { jwksUrl, jwks: issuer.jwks });
    const invoke = handlerFor(environment);
    const urls = { baseUrl: url, tokenUrl: `${url}${TOKEN_PATH}` };
    const announce = options.announce ?? true;
    const localClient = announce ? await saveLocalClient(dataDir, urls) : await localClientOf(dataDir, urls);
    if (announce) await writeServerRecord(dataDir, { pid: process.pid, url, jwksUrl, store });
    serving.resolve({ handler: invoke, client: localClient });
    let releasing: Promise<void> | undefined;
    let closing: Promise<void> | undefined;
    const releaseDataDir = () => {
      releasing ??= (async () => {
        await removeServerRecord(dataDir, url);
        // dynalite waits for its pending writes, then closes LevelDB; the claim goes last.
        await closeStore();
        await claim.release();
      })();
      return releasing;
    };
    return {
      url,
      store,
      client: localClient,
      invoke,
      releaseDataDir,
      close() {
        closing ??= (async () => {
          await closeServer(server);
          await releaseDataDir();
        })();
        return closing;
      },
    };
  } catch (error) {
    serving.reject(error);
    for (const step of undo) await step().catch(() => undefined);
    throw error;
  }
}

/** The embedded dynalite on the data dir, or the DynamoDB endpoint given instead. */
async function openStore({
  dataDir,
  dynamoDbEndpoint,
  tableName = DEFAULT_TABLE_NAME,
  replicatedWriteConflicts,
}: LocalApiOptions): Promise<{ store: StoreTarget; closeStore: () => Promise<void> }> {
  if (dynamoDbEndpoint) {
    if (replicatedWriteConflicts) {
      throw new Error(
        "PLANTS_REPLICATED_WRITE_CONFLICTS applies to the embedded store only (unset AWS_ENDPOINT_URL_DYNAMODB)",
      );
    }
    return { store: { endpoint: dynamoDbEndpoint, embedded: false, tableName }, closeStore: async () => {} };
  }
  const location = join(dataDir, "dynamodb");
  answerStoreFaults();
  await checkStoreOpens(location);
  const dynalite = await startDynalite({ path: location });
  if (!replicatedWriteConflicts) {
    return { store: { endpoint: dynalite.endpoint, embedded: true, tableName }, closeStore: dynalite.close };
  }
  const front = await startConflictingFront(dynalite.endpoint, replicatedWriteConflicts);
  const closeStore = async () => {
    await front.close();
    await dynalite.close();
  };
  return { store: { endpoint: front.endpoint, embedded: true, tableName }, closeStore };
}

/** What a request needs that exists only once the port is known. */
interface Serving {
  handler: Handler;
  /** As saved in client.json. */
  client: LocalClient;
}

interface ServeContext {
  issuer: TokenIssuer;
  /**
   * Settles once the handler is made and client.json and server.json are written (or the start failed):
   * every request waits for it, never refused, and none is answered before those files exist.
   */
  serving: Promise<Serving>;
  log: (line: string) => void;
  corsAllowOrigins: CorsAllowOrigins | undefined;
  /** Aborted when the server can read this request's body no further (answerClientError). */
  bodyUnreadable: AbortSignal;
}

async function serve(request: IncomingMessage, response: ServerResponse, context: ServeContext) {
  const startedAt = performance.now();
  const method = request.method ?? "GET";
  const { rawPath } = splitTarget(request);
  const { corsAllowOrigins } = context;
  const origin = request.headers.origin;
  const isPreflight = corsAllowOrigins !== undefined && method === "OPTIONS";
  const { result, headers, loggedByFunction, logNote } = await context.serving.then(
    (serving): Promise<Answer> | Answer =>
      isPreflight
        ? { result: preflightResult(origin, corsAllowOrigins) }
        : answer(request, method, rawPath, context, serving).catch(
            (error: unknown): Answer => ({
              // Only reading the request can fail here: the client went away, or ended it mid-body.
              result: unreadableRequestResult(rawPath, error),
              headers: { connection: "close" },
            }),
          ),
    // The start failed, and the process is about to exit: API Gateway's answer to a function that failed.
    (): Answer => ({ result: jsonResult(500, { message: "Internal Server Error" }) }),
  );
  // Like API Gateway, the gateway's CORS headers win over any the function set.
  const cors =
    corsAllowOrigins === undefined || isPreflight ? {} : corsAnswerHeaders(origin, corsAllowOrigins);
  // A browser shows its page nothing of a refused origin but "Failed to fetch": say here what it was.
  const refusal = originRefusal(origin, corsAllowOrigins);
  try {
    writeHttpApiResult(response, { ...result, headers: { ...result.headers, ...cors } }, headers);
    const took = `${method} ${rawPath} ${result.statusCode} ${Math.round(performance.now() - startedAt)}ms`;
    const line = logNote === undefined ? took : `${took}: ${logNote}`;
    if (!loggedByFunction) context.log(refusal ? `${line}: ${refusal}` : line);
    else if (refusal) context.log(`${method} ${rawPath}: ${refusal}`);
  } catch (error) {
    // A result API Gateway could not send either (a bad status or header): the client gets a reset.
    console.error(`could not answer ${method} ${rawPath}:`, error);
    response.destroy();
  }
}

interface Answer {
  result: HttpApiResult;
  headers?: Record<string, string>;
  /** The function answered, and wrote the request's log line. */
  loggedByFunction?: boolean;
  /** Why the gateway answered, for the request's log line. */
  logNote?: string;
}

async function answer(
  request: IncomingMessage,
  method: string,
  rawPath: string,
  { issuer, bodyUnreadable }: ServeContext,
  { handler, client }: Serving,
): Promise<Answer> {
  const requestId = randomUUID();
  // In AWS the token endpoint is Cognito's, on its own domain; here it shares the port.
  if (method === "POST" && rawPath === TOKEN_PATH) {
    let body: Buffer;
    try {
      body = await readBody(request, { maxBytes: MAX_TOKEN_REQUEST_BYTES, unreadable: bodyUnreadable });
    } catch (error) {
      if (!(error instanceof RequestTooLargeError)) throw error;
      return { result: oauthError("invalid_request"), headers: { "x-amzn-requestid": requestId } };
    }
    // Every copy of a repeated header, as /plants sees them: two Authorization headers are refused.
    const tokenRequest = {
      authorization: request.headersDistinct.authorization ?? [],
      contentType: request.headersDistinct["content-type"] ?? [],
      body: body.toString("utf8"),
    };
    return {
      result: await answerTokenRequest(tokenRequest, client, issuer),
      headers: { "x-amzn-requestid": requestId },
    };
  }
  // The stack's HTTP API has the routes of the table; anything else gets API Gateway's own 404.
  // GET of the key set is the local issuer's, for the handler (in AWS, the issuer serves its own).
  if (method === "GET" && rawPath === JWKS_PATH) return { result: jsonResult(200, issuer.jwks) };
  const route = matchRoute(method, rawPath)?.route;
  if (route === undefined) {
    return { result: jsonResult(404, { message: "Not Found" }), headers: { "apigw-requestid": requestId } };
  }
  let body: Buffer;
  try {
    body = await readBody(request, { unreadable: bodyUnreadable });
  } catch (error) {
    if (!(error instanceof RequestTooLargeError)) throw error;
    return { result: errorResult(413, error.message) };
  }
  const event = toHttpApiEvent(request, body, routeKey(route), requestId);
  if (Buffer.byteLength(JSON.stringify(event)) > MAX_INVOKE_PAYLOAD_BYTES) {
    return {
      result: jsonResult(500, { message: "Internal Server Error" }),
      headers: { "apigw-requestid": requestId },
      logNote: `the event is over Lambda's ${MAX_INVOKE_PAYLOAD_BYTES}-byte invoke limit; the function did not run`,
    };
  }
  try {
    const result = await handler(event);
    return { result, headers: { "apigw-requestid": requestId }, loggedByFunction: true };
  } catch (error) {
    // The handler promises never to throw; if it does (or its instance could not be made), API Gateway
    // answers its own 500: show why here, as the function's log would.
    console.error(`the handler failed on request ${requestId}:`, error);
    return {
      result: jsonResult(500, { message: "Internal Server Error" }),
      headers: { "apigw-requestid": requestId },
    };
  }
}

/** A request whose body could not be read to its end: the token endpoint's OAuth error, or the API's Error body. */
function unreadableRequestResult(rawPath: string, error: unknown): HttpApiResult {
  if (rawPath === TOKEN_PATH) return oauthError("invalid_request");
  return errorResult(
    400,
    `the request could not be read: ${error instanceof Error ? error.message : String(error)}`,
  );
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

/** The answer under way on each connection, if any, and what tells its request its body is unreadable. */
const answering = new WeakMap<Socket, { response: ServerResponse; bodyUnreadable: AbortController }>();

/**
 * What Node does on a request it cannot parse (a bare 400, then the connection cut), except while a
 * request is being answered on that connection. Then the error (a chunked body that is not one, cut short
 * by its sender's half-close or not; the request's time running out) ends the reading of that request's
 * body, the request gets its own answer (400, naming the error), and the connection closes after it.
 */
function answerClientError(error: Error, socket: Duplex): void {
  const underWay = answering.get(socket as Socket);
  if (underWay && !underWay.response.headersSent) {
    underWay.response.shouldKeepAlive = false;
    underWay.bodyUnreadable.abort(new Error(unreadableBodyReason(error)));
    return;
  }
  if (socket.writable) socket.end("HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n");
  else socket.destroy(error);
}

/** What the answer says of a body Node's parser failed on, or whose time ran out. */
function unreadableBodyReason({ code, reason, message }: Error & { code?: string; reason?: string }): string {
  if (code === "HPE_INVALID_EOF_STATE") return BODY_CUT_SHORT;
  if (code === "ERR_HTTP_REQUEST_TIMEOUT") return "the request did not arrive whole in time";
  return `its body's framing is not HTTP/1.1: ${reason ?? message}`;
}

function deferred<T>(): { promise: Promise<T>; resolve(value: T): void; reject(reason: unknown): void } {
  let settle = { resolve: (_value: T) => {}, reject: (_reason: unknown) => {} };
  const promise = new Promise<T>((resolve, reject) => {
    settle = { resolve, reject };
  });
  promise.catch(() => undefined); // a start that fails before any request came: nobody waits
  return { promise, ...settle };
}
