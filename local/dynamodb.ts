/**
 * The DynamoDB the local run, the tests and the benchmarks use: dynalite, in-process, on a loopback
 * port, with its data in LevelDB under a folder (or in memory), and the plants table created on it.
 */
import { once } from "node:events";
import type { RequestListener, Server } from "node:http";
import { createRequire } from "node:module";
import type { AddressInfo } from "node:net";
import dynalite from "dynalite";
import { createDynamoDbClient, type DynamoDbIdentity } from "../lambda/store/dynamodb-client.ts";

export type { DynamoDbIdentity };

export const LOCAL_REGION = "us-east-1";
export const LOCAL_CREDENTIALS = { accessKeyId: "local", secretAccessKey: "local" } as const;

/** Who signs the local calls: DynamoDB Local keeps one set of tables per access key and region. */
export const LOCAL_IDENTITY: DynamoDbIdentity = { region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS };

export interface LocalDynamoDb {
  endpoint: string;
  close(): Promise<void>;
}

/** Starts dynalite; `path` keeps the data on disk across restarts, without it the data is in memory. */
export async function startDynalite(options: { path?: string; port?: number } = {}): Promise<LocalDynamoDb> {
  const server = dynalite({
    ...(options.path === undefined ? {} : { path: options.path }),
    createTableMs: 0,
    deleteTableMs: 0,
    updateTableMs: 0,
  });
  refuseBrowserPages(server);
  server.listen(options.port ?? 0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        // A connection that never sent a request (a store's, opened ahead at init) is not idle to
        // node:http: close() alone would wait for it until the headers timeout, 60 s.
        server.closeAllConnections();
      }),
  };
}

/**
 * dynalite checks no signature, and answers any web page's CORS preflight with `Access-Control-Allow-Origin:
 * *`: a page the developer visits could read and change the local store behind the API's back. No
 * DynamoDB client sends `Origin`, and a browser always does on a cross-origin call and its preflight, so
 * such requests are refused before dynalite sees them.
 */
function refuseBrowserPages(server: Server): void {
  const serve = server.listeners("request") as RequestListener[];
  server.removeAllListeners("request");
  server.on("request", (request, response) => {
    if (request.headers.origin === undefined && request.method !== "OPTIONS") {
      for (const listener of serve) listener.call(server, request, response);
      return;
    }
    response.writeHead(403, { "content-type": "application/x-amz-json-1.0", connection: "close" });
    response.end(
      JSON.stringify({
        __type: "com.amazonaws.dynamodb.v20120810#AccessDeniedException",
        message: "the local store answers no browser page (a request with an Origin, or a preflight)",
      }),
    );
  });
}

/** The LevelDB class dynalite opens its data with (classic-level, through the `level` package). */
const { Level } = createRequire(createRequire(import.meta.url).resolve("dynalite"))("level") as {
  Level: new (location: string) => { open(): Promise<void>; close(): Promise<void> };
};

/**
 * Opens and closes the LevelDB at `location`, throwing with LevelDB's own reason when it cannot be used
 * (a file in its place, another process holding its lock): dynalite would end the process with a bare
 * "Database is closed".
 */
export async function checkStoreOpens(location: string): Promise<void> {
  const db = new Level(location);
  try {
    await db.open();
  } catch (error) {
    let cause = error;
    while (cause instanceof Error && cause.cause !== undefined) cause = cause.cause;
    throw new Error(
      `the embedded store in ${location} cannot be opened: ${(cause as Error).message ?? cause}`,
    );
  }
  await db.close();
}

/** A call taking longer than this is a hung endpoint, not a slow one: fail the caller instead of waiting. */
const CALL_TIMEOUT_MS = 10_000;

/**
 * Sends one DynamoDB JSON-protocol call with the function's own client (signed the same way) and
 * returns the answer, error answers included.
 */
export function callDynamoDb(endpoint: string, operation: string, input: object, identity = LOCAL_IDENTITY) {
  const client = createDynamoDbClient({ endpoint, ...identity });
  return client.send(operation, input, AbortSignal.timeout(CALL_TIMEOUT_MS));
}

/** Creates the plants table (partition key `id`, a Number) unless it exists already. */
export async function ensurePlantsTable(endpoint: string, tableName: string, identity = LOCAL_IDENTITY) {
  const table = {
    TableName: tableName,
    AttributeDefinitions: [{ AttributeName: "id", AttributeType: "N" }],
    KeySchema: [{ AttributeName: "id", KeyType: "HASH" }],
    BillingMode: "PAY_PER_REQUEST",
  };
  const { status, body } = await callDynamoDb(endpoint, "CreateTable", table, identity);
  if (status === 200 || String(body.__type).endsWith("ResourceInUseException")) return;
  throw new Error(`could not create table ${tableName}: ${JSON.stringify(body)}`);
}
