/**
 * A floor with the duties every create of this API owes besides the three steps a floor takes (the
 * token's signature, the PutItem's signature, the PutItem: a FloorSteps, the warm floor's or the
 * issuer-free floor's), each written as plainly as Node allows, none of them the handler's code:
 * - the media type, and the token's claims after its signature: issuer, expiry, client, scope;
 * - the body: JSON, an object of `id`, `name` and an optional `tag` and nothing else, the id read
 *   exactly as an int64 from the text, the strings' lengths;
 * - the PutItem of that plant, never overwriting, under one attempt's timeout, its answer read as JSON;
 * - the answer (the plant as JSON) and one log line with the request's metrics (Embedded Metric Format).
 * It answers 500 where the API answers 4xx: the bench sends only valid creates, and fails on any other.
 *
 * Not a budget's floor: item 3 measures it beside the warm floor, and item 2 beside the issuer-free
 * floor (bench/entries/), so that what the handler costs beyond each can be read as the API's duties and
 * the rest (docs/PERFORMANCE.md: "Warm CPU", and "At 8132270" for the cold path).
 */
import { DEFAULT_REQUIRED_SCOPE, DEFAULT_STORE_ATTEMPT_TIMEOUT_MS } from "../lambda/defaults.ts";
import {
  type FloorAnswer,
  type FloorEvent,
  type FloorHandler,
  type FloorSteps,
  setting,
} from "./floor-handlers.ts";

/** What a token must say: the function's own settings, as the handler reads them. */
export interface TokenPolicy {
  issuer: string;
  clientIds: string[];
  scope: string;
}

export interface DutiedPlant {
  /** Exact, as written in the body. */
  id: bigint;
  name: string;
  tag?: string;
}

/** A create done: the client the token was issued to, and the plant stored. */
export interface Created {
  clientId: string;
  plant: DutiedPlant;
}

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;
const PLANT_KEYS = new Set(["id", "name", "tag"]);

/** The floor of `steps` with the duties; its settings read now (at init). */
export function floorWithDuties({ verify, putItem }: FloorSteps): FloorHandler {
  const policy: TokenPolicy = {
    issuer: setting("JWT_ISSUER"),
    clientIds: setting("JWT_CLIENT_IDS").split(","),
    scope: DEFAULT_REQUIRED_SCOPE,
  };
  const table = setting("TABLE_NAME");
  const functionName = process.env.AWS_LAMBDA_FUNCTION_NAME ?? "local";
  /** The create's duties up to the store's answer; throws on anything but a create. */
  const create = async (event: FloorEvent): Promise<Created> => {
    if (!/^application\/json\b/i.test(event.headers?.["content-type"] ?? "")) throw new Error("not JSON");
    const clientId = clientOfClaims(await verify(event), policy, Date.now() / 1000);
    const plant = plantOfBody(event.body ?? "");
    const stored = JSON.parse(await putItem(putItemOf(table, plant), DEFAULT_STORE_ATTEMPT_TIMEOUT_MS));
    if (typeof stored !== "object" || stored === null) throw new Error("the store's answer is not JSON");
    return { clientId, plant };
  };
  return async (event) => {
    const startedAt = performance.now();
    let answer: FloorAnswer;
    let created: Created | undefined;
    try {
      created = await create(event);
      const { id: _id, ...answered } = created.plant;
      answer = {
        statusCode: 200,
        headers: { "content-type": "application/json" },
        body: JSON.stringify(answered),
      };
    } catch (error) {
      answer = { statusCode: 500, body: error instanceof Error ? error.message : String(error) };
    }
    const latencyMs = performance.now() - startedAt;
    process.stdout.write(`${JSON.stringify(logLine(answer.statusCode, latencyMs, functionName, created))}\n`);
    return answer;
  };
}

/** The token's claims, checked after its signature; the client it was issued to. */
export function clientOfClaims(payload: string, policy: TokenPolicy, nowSeconds: number): string {
  const claims = JSON.parse(Buffer.from(payload, "base64url").toString()) as Record<string, unknown>;
  if (claims.iss !== policy.issuer) throw new Error("wrong issuer");
  if (typeof claims.exp !== "number" || claims.exp <= nowSeconds) throw new Error("expired");
  const clientId = claims.client_id;
  if (typeof clientId !== "string" || !policy.clientIds.includes(clientId)) throw new Error("wrong client");
  if (typeof claims.scope !== "string" || !claims.scope.split(" ").includes(policy.scope)) {
    throw new Error("no scope");
  }
  return clientId;
}

/** The body's plant: its id exact, from the text, as JSON.parse would round it. */
export function plantOfBody(body: string): DutiedPlant {
  const value = JSON.parse(body) as unknown;
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw new Error("not an object");
  const { id, name, tag } = value as Record<string, unknown>;
  for (const key of Object.keys(value)) if (!PLANT_KEYS.has(key)) throw new Error(`unknown ${key}`);
  if (typeof id !== "number" || !Number.isInteger(id)) throw new Error("no integer id");
  const digits = /"id"\s*:\s*(-?\d+)\s*[,}]/.exec(body)?.[1];
  if (digits === undefined) throw new Error("no exact id");
  const exactId = BigInt(digits);
  if (Number(exactId) !== id) throw new Error("the id read is another key's");
  if (exactId < INT64_MIN || exactId > INT64_MAX) throw new Error("id outside int64");
  if (typeof name !== "string" || name.length < 1 || name.length > 256) throw new Error("bad name");
  if (tag !== undefined && (typeof tag !== "string" || tag.length < 1 || tag.length > 64)) {
    throw new Error("bad tag");
  }
  return tag === undefined ? { id: exactId, name } : { id: exactId, name, tag };
}

/** The PutItem that stores `plant` unless its id is taken. */
export function putItemOf(table: string, plant: DutiedPlant): string {
  return JSON.stringify({
    TableName: table,
    Item: {
      id: { N: plant.id.toString() },
      name: { S: plant.name },
      ...(plant.tag === undefined ? {} : { tag: { S: plant.tag } }),
    },
    ConditionExpression: "attribute_not_exists(id)",
  });
}

/** The request's log line, its metrics in Embedded Metric Format, as CloudWatch reads them. */
export function logLine(
  status: number,
  latencyMs: number,
  functionName: string,
  created: Created | undefined,
): object {
  const metric = status === 200 ? "Created" : "Fault";
  return {
    level: status === 200 ? "INFO" : "ERROR",
    status,
    latencyMs: Math.round(latencyMs * 100) / 100,
    ...(created === undefined ? {} : { clientId: created.clientId, plantId: created.plant.id.toString() }),
    _aws: {
      Timestamp: Date.now(),
      CloudWatchMetrics: [
        {
          Namespace: "PlantStore",
          Dimensions: [["FunctionName"]],
          Metrics: [
            { Name: metric, Unit: "Count" },
            { Name: "StoreAttempts", Unit: "Count" },
          ],
        },
      ],
    },
    FunctionName: functionName,
    [metric]: 1,
    StoreAttempts: 1,
  };
}
