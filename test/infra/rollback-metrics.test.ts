/**
 * What the rollback alarms (infra/alarms.ts, `rollbackAlarms`) watch, produced by the built bundle run
 * as Lambda runs it: imported in a plain Node process whose environment Lambda would set, published
 * version included, its log lines read as CloudWatch extracts their metrics. A caller's forged tokens, an
 * issuer down, a throttling store and a 4xx move no rollback metric; a 500 the function answers does.
 */
import { execFile } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ApiGatewayEvent } from "../../lambda/http/api-gateway.ts";
import { FAULT_METRIC, METRICS_NAMESPACE } from "../../lambda/metrics.ts";
import { callDynamoDb, ensurePlantsTable, type LocalDynamoDb, startDynalite } from "../../local/dynamodb.ts";
import { createTokenIssuer, generateSigningKey, type TokenIssuer } from "../../local/token-issuer.ts";
import { apiGatewayEvent } from "../../support/events.ts";
import { functionEnvironment, TEST_ISSUER } from "../../support/harness.ts";
import { type JwksServer, startJwksServer } from "../../support/jwks-server.ts";
import { buildBundle } from "../../tools/build-bundle.ts";
import { type FaultyDynamoDb, startFaultyDynamoDb } from "../support/faulty-dynamodb.ts";
import { accessTokenClaims, signToken } from "../support/forged-tokens.ts";

const execFileAsync = promisify(execFile);
/** A fresh Node process importing the bundle and invoking it: seconds, more on a busy machine. */
const INVOCATIONS_TIMEOUT_MS = 120_000;

const FUNCTION_NAME = "PlantStore-Handler";
const NEW_VERSION = "7";
const PLANTS = "plants";
/** A table keyed by a string id: DynamoDB refuses the function's numeric key as malformed (ValidationException). */
const STRING_KEYED = "plants-string-keyed";

let bundleDirectory: string;
let bundlePath: string;
let dynamoDb: LocalDynamoDb;
let throttling: FaultyDynamoDb;
let issuer: TokenIssuer;
let signingKey: Awaited<ReturnType<typeof generateSigningKey>>;
let jwks: JwksServer;

beforeAll(async () => {
  bundleDirectory = await mkdtemp(join(tmpdir(), "plant-store-bundle-"));
  bundlePath = await buildBundle(bundleDirectory);
  dynamoDb = await startDynalite();
  await ensurePlantsTable(dynamoDb.endpoint, PLANTS);
  const created = await callDynamoDb(dynamoDb.endpoint, "CreateTable", {
    TableName: STRING_KEYED,
    AttributeDefinitions: [{ AttributeName: "id", AttributeType: "S" }],
    KeySchema: [{ AttributeName: "id", KeyType: "HASH" }],
    BillingMode: "PAY_PER_REQUEST",
  });
  expect(created.status).toBe(200);
  throttling = await startFaultyDynamoDb(dynamoDb.endpoint);
  throttling.script([], "throttle");
  signingKey = await generateSigningKey();
  issuer = await createTokenIssuer(TEST_ISSUER, signingKey);
  jwks = await startJwksServer(issuer.jwks);
}, 60_000);

afterAll(async () => {
  await jwks?.close();
  await throttling?.close();
  await dynamoDb?.close();
  if (bundleDirectory) await rm(bundleDirectory, { recursive: true, force: true });
});

/** The environment Lambda gives the published version NEW_VERSION of the function, with the stack's variables. */
function lambdaEnvironment(overrides: Record<string, string> = {}): Record<string, string> {
  return functionEnvironment(dynamoDb.endpoint, jwks.url, {
    PATH: process.env.PATH ?? "",
    AWS_LAMBDA_FUNCTION_NAME: FUNCTION_NAME,
    AWS_LAMBDA_FUNCTION_VERSION: NEW_VERSION,
    TABLE_NAME: PLANTS,
    ...overrides,
  });
}

interface Invocations {
  /** Each invocation's status, or `crashed` when the handler threw (Lambda's Errors). */
  outcomes: (number | "crashed")[];
  /** Every metric CloudWatch would extract from the log, `<namespace>/<name>/<dimension=value,…>` → sum. */
  metrics: Record<string, number>;
}

/** Imports the bundle's Lambda entry point in a fresh process with `environment` and invokes it once per event. */
async function invokeAsLambda(
  environment: Record<string, string>,
  events: ApiGatewayEvent[],
): Promise<Invocations> {
  const script = `
    const [bundlePath, events] = process.argv.slice(1);
    const { handler } = await import(bundlePath);
    for (const event of JSON.parse(events)) {
      let outcome;
      try { outcome = (await handler(event, { awsRequestId: crypto.randomUUID() })).statusCode; }
      catch { outcome = "crashed"; }
      process.stdout.write("\\nOUTCOME " + JSON.stringify(outcome) + "\\n");
    }
    process.exit(0);
  `;
  const { stdout } = await execFileAsync(
    process.execPath,
    ["--input-type=module", "--eval", script, pathToFileURL(bundlePath).href, JSON.stringify(events)],
    { env: environment, maxBuffer: 16 * 1024 * 1024 },
  );
  const lines = stdout.split("\n");
  return {
    outcomes: lines.filter((line) => line.startsWith("OUTCOME ")).map((line) => JSON.parse(line.slice(8))),
    metrics: extractedMetrics(lines.filter((line) => line.startsWith("{"))),
  };
}

interface EmfLine {
  _aws?: { CloudWatchMetrics: { Namespace: string; Dimensions: string[][]; Metrics: { Name: string }[] }[] };
  [field: string]: unknown;
}

/** CloudWatch's reading of EMF: every listed metric under every declared dimension set, summed. */
function extractedMetrics(lines: string[]): Record<string, number> {
  const sums: Record<string, number> = {};
  for (const line of lines.map((text) => JSON.parse(text) as EmfLine)) {
    for (const directive of line._aws?.CloudWatchMetrics ?? []) {
      for (const dimensions of directive.Dimensions) {
        for (const { Name } of directive.Metrics) {
          const key = `${directive.Namespace}/${Name}/${dimensions.map((name) => `${name}=${line[name]}`).join(",")}`;
          sums[key] = (sums[key] ?? 0) + Number(line[Name]);
        }
      }
    }
  }
  return sums;
}

/** What the two rollback alarms sum: the new version's Fault, and its invocations that crashed. */
function rollbackMetrics({ outcomes, metrics }: Invocations): {
  newVersionFaults: number;
  newVersionErrors: number;
} {
  return {
    newVersionFaults:
      metrics[
        `${METRICS_NAMESPACE}/${FAULT_METRIC}/FunctionName=${FUNCTION_NAME},FunctionVersion=${NEW_VERSION}`
      ] ?? 0,
    newVersionErrors: outcomes.filter((outcome) => outcome === "crashed").length,
  };
}

const plant = () => JSON.stringify({ id: Math.floor(Math.random() * 1e9), name: "Fern" });

async function createEvents(count: number, token: () => Promise<string>): Promise<ApiGatewayEvent[]> {
  const events: ApiGatewayEvent[] = [];
  for (let index = 0; index < count; index++)
    events.push(apiGatewayEvent("2.0", { token: await token(), body: plant() }));
  return events;
}

describe("the rollback alarms' metrics, from the bundle run as Lambda runs the new version", () => {
  it(
    "stay at zero for a burst of tokens naming random keys",
    async () => {
      const forged = await createEvents(30, () =>
        signToken(signingKey, accessTokenClaims(), { kid: randomUUID() }),
      );
      const invocations = await invokeAsLambda(lambdaEnvironment(), forged);
      expect(new Set(invocations.outcomes)).not.toContain(200);
      for (const outcome of invocations.outcomes) expect([401, 503]).toContain(outcome);
      expect(rollbackMetrics(invocations)).toEqual({ newVersionFaults: 0, newVersionErrors: 0 });
    },
    INVOCATIONS_TIMEOUT_MS,
  );

  it(
    "stay at zero while the issuer's key set cannot be fetched",
    async () => {
      jwks.setBehaviour("fail");
      try {
        const invocations = await invokeAsLambda(
          lambdaEnvironment(),
          await createEvents(5, () => issuer.mint()),
        );
        expect(invocations.outcomes).toEqual([503, 503, 503, 503, 503]);
        expect(invocations.metrics[`PlantStore/IssuerUnavailable/FunctionName=${FUNCTION_NAME}`]).toBe(5);
        expect(rollbackMetrics(invocations)).toEqual({ newVersionFaults: 0, newVersionErrors: 0 });
      } finally {
        jwks.setBehaviour("serve");
      }
    },
    INVOCATIONS_TIMEOUT_MS,
  );

  it(
    "stay at zero while the store throttles every call",
    async () => {
      const invocations = await invokeAsLambda(
        lambdaEnvironment({ AWS_ENDPOINT_URL_DYNAMODB: throttling.url }),
        await createEvents(5, () => issuer.mint()),
      );
      expect(invocations.outcomes).toEqual([503, 503, 503, 503, 503]);
      expect(invocations.metrics[`PlantStore/StoreUnavailable/FunctionName=${FUNCTION_NAME}`]).toBe(5);
      expect(rollbackMetrics(invocations)).toEqual({ newVersionFaults: 0, newVersionErrors: 0 });
    },
    INVOCATIONS_TIMEOUT_MS,
  );

  it(
    "stay at zero for the caller's mistakes (4xx)",
    async () => {
      const token = await issuer.mint();
      const invocations = await invokeAsLambda(lambdaEnvironment(), [
        apiGatewayEvent("2.0", { token, body: '{"id": 1}' }),
        apiGatewayEvent("2.0", { body: plant() }),
        apiGatewayEvent("2.0", { token, body: plant(), headers: { "content-type": "text/plain" } }),
      ]);
      expect(invocations.outcomes).toEqual([400, 401, 415]);
      expect(rollbackMetrics(invocations)).toEqual({ newVersionFaults: 0, newVersionErrors: 0 });
    },
    INVOCATIONS_TIMEOUT_MS,
  );

  it(
    "count a 500 the new version answers, under its version, when the store refuses its request as malformed",
    async () => {
      const invocations = await invokeAsLambda(
        lambdaEnvironment({ TABLE_NAME: STRING_KEYED }),
        await createEvents(2, () => issuer.mint()),
      );
      expect(invocations.outcomes).toEqual([500, 500]);
      expect(rollbackMetrics(invocations)).toEqual({ newVersionFaults: 2, newVersionErrors: 0 });
      // The operator's count, over every version, moves too.
      expect(invocations.metrics[`PlantStore/Fault/FunctionName=${FUNCTION_NAME}`]).toBe(2);
    },
    INVOCATIONS_TIMEOUT_MS,
  );
});
