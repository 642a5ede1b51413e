/**
 * The warm floor: the least a warm instance must do per create, written as plainly as Node allows, as
 * the cold floors are (bench/floor-handlers.ts), whose token check and SigV4 it shares. The issuer's
 * key is fetched on the first call and kept, as any verifier keeps it; then each call checks the
 * token's RS256 signature with it, signs the PutItem (with the day's signing key, kept as any SigV4
 * signer keeps it) and sends it on the connection kept open since the call before. Bundled like the
 * handler (bench/bundles.ts), bench/warm-cpu.ts runs it in the process that runs the handler's bundle,
 * against the harness's plain-HTTP store and key set (node:http or node:https, as the URL says).
 */
import type { KeyObject } from "node:crypto";
import { Agent as HttpAgent, request as httpRequest } from "node:http";
import { Agent as HttpsAgent, request as httpsRequest } from "node:https";
import {
  type FloorHandler,
  type FloorSteps,
  floorAnswer,
  keyOfKeySet,
  limitAnswerTime,
  putItemBody,
  setting,
  signedPutItemHeaders,
  verifyToken,
} from "./floor-handlers.ts";

export function warmFloor(): FloorHandler {
  const { verify, putItem } = warmSteps();
  return (event) => floorAnswer(verify(event).then(() => putItem(putItemBody(event))));
}

/** The warm floor's steps, on connections kept open and with the issuer's key fetched once and kept. */
export function warmSteps(): FloorSteps {
  const store = new URL(setting("AWS_ENDPOINT_URL_DYNAMODB"));
  const keys = new Map<string | undefined, Promise<KeyObject>>();
  const keyFor = (kid: string | undefined): Promise<KeyObject> => {
    let key = keys.get(kid);
    if (key === undefined) {
      key = send(new URL(setting("JWKS_URL")), "GET", { accept: "application/json" }).then((keySet) =>
        keyOfKeySet(keySet, kid),
      );
      keys.set(kid, key);
    }
    return key;
  };
  return {
    verify: (event) => verifyToken(event, keyFor),
    putItem: (body, timeoutMs) =>
      send(store, "POST", signedPutItemHeaders(store.host, body), body, timeoutMs),
  };
}

const agents = { http: new HttpAgent({ keepAlive: true }), https: new HttpsAgent({ keepAlive: true }) };

/**
 * The answer's body; anything but 200 throws, as does no answer within `timeoutMs` (when given).
 * Connections are kept open for the next call.
 */
function send(
  url: URL,
  method: string,
  headers: Record<string, string>,
  body?: string,
  timeoutMs?: number,
): Promise<string> {
  const secure = url.protocol === "https:";
  const request = secure ? httpsRequest : httpRequest;
  const agent = secure ? agents.https : agents.http;
  return new Promise((resolve, reject) => {
    const outgoing = request(url, { method, headers, agent }, (incoming) => {
      let text = "";
      incoming.setEncoding("utf8");
      incoming.on("data", (chunk: string) => {
        text += chunk;
      });
      incoming.on("end", () =>
        incoming.statusCode === 200
          ? resolve(text)
          : reject(new Error(`${method} ${url.pathname} answered ${incoming.statusCode}`)),
      );
      incoming.on("error", reject);
    });
    limitAnswerTime(outgoing, timeoutMs);
    outgoing.on("error", reject);
    outgoing.end(body);
  });
}
