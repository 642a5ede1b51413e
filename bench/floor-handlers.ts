/**
 * The floors a first create is compared with, bundled like the handler (bench/bundles.ts): the least
 * any implementation must do on a cold path, written as plainly as Node allows.
 *
 * - `storeFloor`: one HTTPS connection to the store and one PutItem, its headers signed beforehand by
 *   the bench (BENCH_FLOOR_STORE_HEADERS; dynalite checks that a call is signed, not the signature).
 * - `verifyingFloor`: the same and, concurrently, one HTTPS GET of the key set and one RS256
 *   verification of the caller's token with node:crypto.
 *
 * Configuration is the handler's own variables (AWS_ENDPOINT_URL_DYNAMODB, TABLE_NAME, JWKS_URL).
 * Anything unexpected answers 500, which fails the measurement.
 */
import { createPublicKey, verify } from "node:crypto";
import { request } from "node:https";

export interface FloorEvent {
  body?: string | null;
  headers?: Record<string, string | undefined>;
}

export interface FloorAnswer {
  statusCode: number;
  body: string;
}

export async function storeFloor(event: FloorEvent): Promise<FloorAnswer> {
  return floorAnswer(putItem(event));
}

export async function verifyingFloor(event: FloorEvent): Promise<FloorAnswer> {
  return floorAnswer(Promise.all([putItem(event), verifyToken(event)]));
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

async function putItem(event: FloorEvent): Promise<void> {
  const id = newPlantId(event);
  const body = JSON.stringify({
    TableName: setting("TABLE_NAME"),
    Item: { id: { N: id }, name: { S: "Fern" } },
    ConditionExpression: "attribute_not_exists(id)",
  });
  const headers = JSON.parse(setting("BENCH_FLOOR_STORE_HEADERS")) as Record<string, string>;
  headers["content-length"] = String(Buffer.byteLength(body));
  const status = (await send("POST", setting("AWS_ENDPOINT_URL_DYNAMODB"), headers, body)).status;
  if (status !== 200) throw new Error(`PutItem answered ${status}`);
}

export function newPlantId(event: FloorEvent): string {
  const id = /"id":(\d+)/.exec(event.body ?? "")?.[1];
  if (id === undefined) throw new Error("the body has no id");
  return id;
}

/** The caller's token: its key fetched from the key set (a new HTTPS connection), one RS256 check. */
export async function verifyToken(event: FloorEvent): Promise<void> {
  const token = (event.headers?.authorization ?? "").replace(/^Bearer /, "");
  const [header = "", payload = "", signature = ""] = token.split(".");
  const { kid } = JSON.parse(Buffer.from(header, "base64url").toString()) as { kid?: string };
  const { status, body } = await send("GET", setting("JWKS_URL"), { accept: "application/json" });
  if (status !== 200) throw new Error(`the key set answered ${status}`);
  const { keys } = JSON.parse(body) as { keys: { kid?: string }[] };
  const jwk = keys.find((key) => key.kid === kid);
  if (jwk === undefined) throw new Error("no key for the token");
  const key = createPublicKey({ key: jwk, format: "jwk" });
  const signed = Buffer.from(`${header}.${payload}`);
  if (!verify("RSA-SHA256", signed, key, Buffer.from(signature, "base64url"))) {
    throw new Error("bad signature");
  }
}

function send(
  method: string,
  url: string,
  headers: Record<string, string>,
  body?: string,
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const outgoing = request(url, { method, headers }, (incoming) => {
      let text = "";
      incoming.setEncoding("utf8");
      incoming.on("data", (chunk: string) => {
        text += chunk;
      });
      incoming.on("end", () => resolve({ status: incoming.statusCode ?? 0, body: text }));
      incoming.on("error", reject);
    });
    outgoing.on("error", reject);
    outgoing.end(body);
  });
}

export function setting(name: string): string {
  const value = process.env[name];
  if (value === undefined) throw new Error(`${name} is not set`);
  return value;
}
