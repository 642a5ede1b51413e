/**
 * The floors a first create is compared with, bundled like the handler (bench/bundles.ts): the least a
 * correct create must do, written as plainly as Node allows, the PutItem signed by the function's own
 * signing library (signedDynamoDbHeaders) and sent with node:https and a keep-alive agent.
 *
 * - `storeFloor()`: one signed PutItem, on a connection opened when it is sent.
 * - `issuerFreeFloor()`: this API's least as it ships, the issuer's key set delivered with the deployment
 *   (JWKS_JSON). At init the keys imported and the store's TLS connection opened, sending nothing; at the
 *   call one RS256 check of the caller's token with the key in hand, then, the caller verified, the signed
 *   PutItem on that connection. No request to the issuer. The budgets are ratios to it.
 * A signature covers the body and the time, and a create may not write before the token is checked, so
 * neither can come earlier. Later calls (the warm creates) reuse the kept connection.
 *
 * The peers (bench/peers/) check the token the same way. Configuration is the handler's own variables;
 * anything unexpected answers 500, which the bench counts as a failed process.
 */
import { createPublicKey, type KeyObject, verify } from "node:crypto";
import { Agent, request } from "node:https";
import type { Duplex } from "node:stream";
import { connect } from "node:tls";
import { signedDynamoDbHeaders } from "../lambda/store/dynamodb-client.ts";
import { putIfAbsentInput } from "../lambda/store/dynamodb-plant-store.ts";

export interface FloorEvent {
  body?: string | null;
  headers?: Record<string, string | undefined>;
}

export interface FloorAnswer {
  statusCode: number;
  body: string;
}

export type FloorHandler = (event: FloorEvent) => Promise<FloorAnswer>;

export function storeFloor(): FloorHandler {
  const store = new StoreAgent();
  return (event) => floorAnswer(putItem(event, store));
}

/** The issuer-free floor, its init done now: call it at module load, as Lambda's init. */
export function issuerFreeFloor(): FloorHandler {
  const keyFor = deliveredKeys();
  const store = new StoreAgent();
  store.openAhead();
  return (event) => floorAnswer(verifyToken(event, keyFor).then(() => putItem(event, store)));
}

/** Keeps its connections open; `openAhead()` opens one now, which the next request takes. */
class StoreAgent extends Agent {
  #opened: Duplex | undefined;

  constructor() {
    super({ keepAlive: true });
  }

  openAhead(): void {
    const url = new URL(setting("AWS_ENDPOINT_URL_DYNAMODB"));
    this.#opened = connect({ host: url.hostname, port: Number(url.port || 443) });
    // One that fails before the first call fails that call (500), not the process.
    this.#opened.once("error", () => undefined);
  }

  override createConnection(...args: Parameters<Agent["createConnection"]>): Duplex | null | undefined {
    const opened = this.#opened;
    this.#opened = undefined;
    return opened ?? super.createConnection(...args);
  }
}

/** The key set delivered in JWKS_JSON, every key imported now: the key a token names, without a fetch. */
export function deliveredKeys(): (kid: string | undefined) => KeyObject {
  const { keys } = JSON.parse(setting("JWKS_JSON")) as { keys: { kid?: string }[] };
  const imported = new Map(keys.map((jwk) => [jwk.kid, createPublicKey({ key: jwk, format: "jwk" })]));
  return (kid) => {
    const key = imported.get(kid);
    if (key === undefined) throw new Error("no key for the token");
    return key;
  };
}

/** The caller's token: one RS256 check with the key `keyFor` gives for its kid. */
export async function verifyToken(
  event: FloorEvent,
  keyFor: (kid: string | undefined) => KeyObject,
): Promise<void> {
  const token = (event.headers?.authorization ?? "").replace(/^Bearer /, "");
  const [header = "", payload = "", signature = ""] = token.split(".");
  const { kid } = JSON.parse(Buffer.from(header, "base64url").toString()) as { kid?: string };
  const signed = Buffer.from(`${header}.${payload}`);
  if (!verify("RSA-SHA256", signed, keyFor(kid), Buffer.from(signature, "base64url"))) {
    throw new Error("bad signature");
  }
}

/** 200 once `work` is done, else 500 with the reason. */
export async function floorAnswer(work: Promise<unknown>): Promise<FloorAnswer> {
  try {
    await work;
    return { statusCode: 200, body: "{}" };
  } catch (error) {
    return { statusCode: 500, body: error instanceof Error ? error.message : String(error) };
  }
}

/** The conditional PutItem of the event's plant, signed, through `agent`; rejects on anything but 200. */
async function putItem(event: FloorEvent, agent: Agent): Promise<void> {
  const url = new URL(setting("AWS_ENDPOINT_URL_DYNAMODB"));
  const body = JSON.stringify(
    putIfAbsentInput(setting("TABLE_NAME"), { id: BigInt(newPlantId(event)), name: "Fern" }),
  );
  const identity = {
    region: setting("AWS_REGION"),
    credentials: {
      accessKeyId: setting("AWS_ACCESS_KEY_ID"),
      secretAccessKey: setting("AWS_SECRET_ACCESS_KEY"),
    },
  };
  const headers = signedDynamoDbHeaders(url, identity, "PutItem", body);
  const status = await new Promise<number | undefined>((resolve, reject) => {
    const outgoing = request(url, { method: "POST", headers, agent }, (incoming) => {
      incoming.resume();
      incoming.on("end", () => resolve(incoming.statusCode));
      incoming.on("error", reject);
    });
    outgoing.on("error", reject);
    outgoing.end(body);
  });
  if (status !== 200) throw new Error(`PutItem answered ${status}`);
}

export function newPlantId(event: FloorEvent): string {
  const id = /"id":(\d+)/.exec(event.body ?? "")?.[1];
  if (id === undefined) throw new Error("the body has no id");
  return id;
}

export function setting(name: string): string {
  const value = process.env[name];
  if (value === undefined) throw new Error(`${name} is not set`);
  return value;
}
