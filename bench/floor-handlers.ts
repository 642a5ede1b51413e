/**
 * The floors a first create is compared with, bundled like the handler (bench/bundles.ts): the least
 * any correct implementation must do on a cold path, written as plainly as Node allows.
 *
 * - `storeFloor`: one HTTPS connection to the store and one PutItem, signed (SigV4) when it is sent.
 * - `issuerFreeFloor()`: this API's least as it ships, with the issuer's key set delivered with the
 *   deployment (JWKS_JSON). At init, its keys imported into node:crypto and the TLS connection to the
 *   store opened (sending nothing), as the handler does; at the call, one RS256 verification of the
 *   caller's token with the key in hand, then, the caller verified, the signed PutItem on that
 *   connection. No request to the issuer. The cold path's budgets are ratios to it.
 * - `verifyingFloor`: the least before keys were delivered, for comparison. Concurrently, one HTTPS GET
 *   of the key set with one RS256 verification of the caller's token, and the TLS connection to the
 *   store; then the signed PutItem on that connection.
 * In both, a create may not write before the token is checked, and a signature covers the body and
 * the time, so neither can come earlier.
 *
 * The warm floor (bench/warm-floor.ts) and the peers (bench/peers/) reuse the token check and the
 * signature.
 *
 * Configuration is the handler's own variables (AWS_ENDPOINT_URL_DYNAMODB, TABLE_NAME, JWKS_URL or
 * JWKS_JSON, the region and credentials). Anything unexpected answers 500, which fails the measurement.
 */
import {
  createHash,
  createHmac,
  createPublicKey,
  createSecretKey,
  type KeyObject,
  verify,
} from "node:crypto";
import type { ClientRequest } from "node:http";
import { request } from "node:https";
import { connect, type TLSSocket } from "node:tls";

export interface FloorEvent {
  body?: string | null;
  headers?: Record<string, string | undefined>;
}

export interface FloorAnswer {
  statusCode: number;
  headers?: Record<string, string>;
  body: string;
}

export async function storeFloor(event: FloorEvent): Promise<FloorAnswer> {
  return floorAnswer(putItem(event));
}

export async function verifyingFloor(event: FloorEvent): Promise<FloorAnswer> {
  return floorAnswer(
    Promise.all([connectToStore(), verifyToken(event)]).then(([connection]) => putItem(event, connection)),
  );
}

export type FloorHandler = (event: FloorEvent) => Promise<FloorAnswer>;

/**
 * The issuer-free floor, its init done (call it at module load, as Lambda's init): the delivered keys
 * imported, the store's connection opening. The first call writes on that connection; a later one
 * (a warm call) opens its own.
 */
export function issuerFreeFloor(): FloorHandler {
  const keyFor = deliveredKeys();
  const takeConnection = storeConnectionFromInit();
  return (event) =>
    floorAnswer(
      Promise.all([takeConnection(), verifyToken(event, keyFor)]).then(([opened]) => putItem(event, opened)),
    );
}

/**
 * A floor's two steps on the network, for a floor that does more around them
 * (bench/floor-with-duties.ts): the token's RS256 check, and the signed PutItem.
 */
export interface FloorSteps {
  /** Checks the token's signature; resolves with its payload, still encoded. */
  verify(event: FloorEvent): Promise<string>;
  /** Sends the PutItem `body`; resolves with the store's answer, rejects on anything but 200 or none in time. */
  putItem(body: string, timeoutMs?: number): Promise<string>;
}

/** The issuer-free floor's steps, its init done now, as issuerFreeFloor's. */
export function issuerFreeSteps(): FloorSteps {
  const keyFor = deliveredKeys();
  const takeConnection = storeConnectionFromInit();
  return {
    verify: (event) => verifyToken(event, keyFor),
    putItem: async (body, timeoutMs) => sendPutItem(body, await takeConnection(), timeoutMs),
  };
}

/** The store's connection, opened now (at init): the first call takes it, a later one opens its own. */
function storeConnectionFromInit(): () => Promise<TLSSocket> {
  let openedAtInit: Promise<TLSSocket> | undefined = connectToStore();
  // A connection that fails before the first call fails that call (500), not the process.
  openedAtInit.catch(() => undefined);
  return () => {
    const connection = openedAtInit ?? connectToStore();
    openedAtInit = undefined;
    return connection;
  };
}

/** The key set delivered in JWKS_JSON, every key imported now: the key a token names, without a fetch. */
export function deliveredKeys(): (kid: string | undefined) => Promise<KeyObject> {
  const { keys } = JSON.parse(setting("JWKS_JSON")) as { keys: { kid?: string }[] };
  const imported = new Map(keys.map((jwk) => [jwk.kid, createPublicKey({ key: jwk, format: "jwk" })]));
  return async (kid) => {
    const key = imported.get(kid);
    if (key === undefined) throw new Error("no key for the token");
    return key;
  };
}

/** 200 once `work` is done, else 500 with the reason: the bench fails on anything but 200. */
export async function floorAnswer(work: Promise<unknown>): Promise<FloorAnswer> {
  try {
    await work;
    return { statusCode: 200, body: "{}" };
  } catch (error) {
    return { statusCode: 500, body: error instanceof Error ? error.message : String(error) };
  }
}

/** One PutItem that never overwrites, on `connection` when given, else on a new one. */
async function putItem(event: FloorEvent, connection?: TLSSocket): Promise<void> {
  await sendPutItem(putItemBody(event), connection);
}

/** The PutItem `body`, signed, on `connection` when given, else on a new one; its answer, if a 200. */
async function sendPutItem(body: string, connection?: TLSSocket, timeoutMs?: number): Promise<string> {
  const url = new URL(setting("AWS_ENDPOINT_URL_DYNAMODB"));
  const answer = await send("POST", url, signedPutItemHeaders(url.host, body), body, connection, timeoutMs);
  if (answer.status !== 200) throw new Error(`PutItem answered ${answer.status}`);
  return answer.body;
}

/** The PutItem of the event's plant, never overwriting. */
export function putItemBody(event: FloorEvent): string {
  return JSON.stringify({
    TableName: setting("TABLE_NAME"),
    Item: { id: { N: newPlantId(event) }, name: { S: "Fern" } },
    ConditionExpression: "attribute_not_exists(id)",
  });
}

function connectToStore(): Promise<TLSSocket> {
  const url = new URL(setting("AWS_ENDPOINT_URL_DYNAMODB"));
  return new Promise((resolve, reject) => {
    const socket = connect({ host: url.hostname, port: Number(url.port || 443) }, () => resolve(socket));
    socket.on("error", reject);
  });
}

/**
 * SigV4 for one DynamoDB PutItem, in its plainest form (a JSON POST to `/`, no query). Not the handler's
 * signer (aws4, in lambda/store/dynamodb-client.ts): a floor that ran the handler's code would measure
 * it, not the least.
 */
export function signedPutItemHeaders(host: string, body: string): Record<string, string> {
  const sha256Hex = (text: string) => createHash("sha256").update(text).digest("hex");
  const amzDate = new Date().toISOString().replace(/[-:]|\.\d{3}/g, "");
  const scope = `${amzDate.slice(0, 8)}/${setting("AWS_REGION")}/dynamodb/aws4_request`;
  const headers: Record<string, string> = {
    "content-length": String(Buffer.byteLength(body)),
    "content-type": "application/x-amz-json-1.0",
    host,
    "x-amz-date": amzDate,
    "x-amz-target": "DynamoDB_20120810.PutItem",
  };
  const names = Object.keys(headers).join(";");
  const canonicalHeaders = Object.entries(headers).map(([name, value]) => `${name}:${value}\n`);
  const canonicalRequest = ["POST", "/", "", canonicalHeaders.join(""), names, sha256Hex(body)].join("\n");
  const stringToSign = ["AWS4-HMAC-SHA256", amzDate, scope, sha256Hex(canonicalRequest)].join("\n");
  const signature = createHmac("sha256", signingKeyFor(scope)).update(stringToSign).digest("hex");
  headers.authorization = `AWS4-HMAC-SHA256 Credential=${setting("AWS_ACCESS_KEY_ID")}/${scope}, SignedHeaders=${names}, Signature=${signature}`;
  return headers;
}

/**
 * The day's signing key, derived once and kept, as any SigV4 signer keeps it (the handler's, the AWS
 * SDK's): as a KeyObject, which node:crypto takes at once, where a Buffer key costs a check on every HMAC
 * (on Node 24, five times the HMAC itself). Re-deriving it per call would put that cost in the warm floor.
 */
let signingKey: { scope: string; key: KeyObject } | undefined;

function signingKeyFor(scope: string): KeyObject {
  if (signingKey?.scope !== scope) {
    let key = Buffer.from(`AWS4${setting("AWS_SECRET_ACCESS_KEY")}`);
    for (const part of scope.split("/")) key = createHmac("sha256", key).update(part).digest();
    signingKey = { scope, key: createSecretKey(key) };
  }
  return signingKey.key;
}

export function newPlantId(event: FloorEvent): string {
  const id = /"id":(\d+)/.exec(event.body ?? "")?.[1];
  if (id === undefined) throw new Error("the body has no id");
  return id;
}

/**
 * The caller's token: one RS256 check, with the key `keyFor` gives for its kid; by default the key is
 * fetched from the key set (a new HTTPS connection). Resolves with the token's payload, still encoded.
 */
export async function verifyToken(
  event: FloorEvent,
  keyFor: (kid: string | undefined) => Promise<KeyObject> = fetchKey,
): Promise<string> {
  const token = (event.headers?.authorization ?? "").replace(/^Bearer /, "");
  const [header = "", payload = "", signature = ""] = token.split(".");
  const { kid } = JSON.parse(Buffer.from(header, "base64url").toString()) as { kid?: string };
  const key = await keyFor(kid);
  const signed = Buffer.from(`${header}.${payload}`);
  if (!verify("RSA-SHA256", signed, key, Buffer.from(signature, "base64url"))) {
    throw new Error("bad signature");
  }
  return payload;
}

/** The key set's key named `kid`, fetched on a new connection. */
async function fetchKey(kid: string | undefined): Promise<KeyObject> {
  const { status, body } = await send("GET", new URL(setting("JWKS_URL")), { accept: "application/json" });
  if (status !== 200) throw new Error(`the key set answered ${status}`);
  return keyOfKeySet(body, kid);
}

/** The key named `kid` in a key set's JSON. */
export function keyOfKeySet(keySet: string, kid: string | undefined): KeyObject {
  const { keys } = JSON.parse(keySet) as { keys: { kid?: string }[] };
  const jwk = keys.find((key) => key.kid === kid);
  if (jwk === undefined) throw new Error("no key for the token");
  return createPublicKey({ key: jwk, format: "jwk" });
}

function send(
  method: string,
  url: URL,
  headers: Record<string, string>,
  body?: string,
  connection?: TLSSocket,
  timeoutMs?: number,
): Promise<{ status: number; body: string }> {
  // An open connection is used without an agent; none given, the global agent opens one. Node takes
  // `createConnection` only when no agent is named: with `agent: false` it makes an agent of its own,
  // which ignores it and opens a second connection.
  const through = connection === undefined ? {} : { createConnection: () => connection };
  return new Promise((resolve, reject) => {
    const outgoing = request(url, { method, headers, ...through }, (incoming) => {
      let text = "";
      incoming.setEncoding("utf8");
      incoming.on("data", (chunk: string) => {
        text += chunk;
      });
      incoming.on("end", () => resolve({ status: incoming.statusCode ?? 0, body: text }));
      incoming.on("error", reject);
    });
    limitAnswerTime(outgoing, timeoutMs);
    outgoing.on("error", reject);
    outgoing.end(body);
  });
}

/**
 * Destroys `outgoing` (its 'error' then says why) when it has not closed within `timeoutMs`, as an
 * attempt's timeout does; no timer without a time. A request closes once its answer has ended, or on
 * its error, which stops the timer.
 */
export function limitAnswerTime(outgoing: ClientRequest, timeoutMs: number | undefined): void {
  if (timeoutMs === undefined) return;
  const timer = setTimeout(() => outgoing.destroy(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
  outgoing.once("close", () => clearTimeout(timer));
}

export function setting(name: string): string {
  const value = process.env[name];
  if (value === undefined) throw new Error(`${name} is not set`);
  return value;
}
