import { readConfig } from "../lambda/config.ts";
import { productionDependencies } from "../lambda/dependencies.ts";
import { createHandler, type Dependencies, type Handler } from "../lambda/http/create-handler.ts";
import {
  ensurePlantsTable,
  LOCAL_CREDENTIALS,
  LOCAL_REGION,
  type LocalDynamoDb,
  startDynalite,
} from "../local/dynamodb.ts";
import {
  createTokenIssuer,
  generateSigningKey,
  LOCAL_CLIENT_ID,
  type TokenIssuer,
} from "../local/token-issuer.ts";
import { type JwksServer, startJwksServer } from "./jwks-server.ts";

export const TEST_ISSUER = "https://issuer.plants.test";
export const TEST_TABLE = "plants";

/**
 * The function's environment as the stack gives it, against a local DynamoDB at `dynamoDbEndpoint`, the
 * table TEST_TABLE and TEST_ISSUER's key set at `jwksUrl`, for the local client; `overrides` win.
 */
export function functionEnvironment(
  dynamoDbEndpoint: string,
  jwksUrl: string,
  overrides: Record<string, string> = {},
): Record<string, string> {
  return {
    TABLE_NAME: TEST_TABLE,
    AWS_REGION: LOCAL_REGION,
    AWS_ACCESS_KEY_ID: LOCAL_CREDENTIALS.accessKeyId,
    AWS_SECRET_ACCESS_KEY: LOCAL_CREDENTIALS.secretAccessKey,
    AWS_ENDPOINT_URL_DYNAMODB: dynamoDbEndpoint,
    JWT_ISSUER: TEST_ISSUER,
    JWKS_URL: jwksUrl,
    JWT_CLIENT_IDS: LOCAL_CLIENT_ID,
    ...overrides,
  };
}

export interface Harness {
  handler: Handler;
  dependencies: Dependencies;
  issuer: TokenIssuer;
  jwks: JwksServer;
  dynamoDb: LocalDynamoDb;
  environment: Record<string, string>;
  close(): Promise<void>;
}

/**
 * The production handler, wired from environment variables as in Lambda, against a real
 * DynamoDB-compatible server (dynalite, in memory) and a loopback JWKS of a freshly made key.
 */
export async function startHarness(environment: Record<string, string> = {}): Promise<Harness> {
  const dynamoDb = await startDynalite();
  await ensurePlantsTable(dynamoDb.endpoint, TEST_TABLE);
  const issuer = await createTokenIssuer(TEST_ISSUER, await generateSigningKey());
  const jwks = await startJwksServer(issuer.jwks);
  const fullEnvironment = functionEnvironment(dynamoDb.endpoint, jwks.url, environment);
  const dependencies = productionDependencies(readConfig(fullEnvironment));
  return {
    handler: createHandler(dependencies),
    dependencies,
    issuer,
    jwks,
    dynamoDb,
    environment: fullEnvironment,
    async close() {
      await jwks.close();
      await dynamoDb.close();
    },
  };
}
