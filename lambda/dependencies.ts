import { createAuthenticator } from "./auth/authenticate.ts";
import type { Config } from "./config.ts";
import type { Dependencies } from "./http/create-handler.ts";
import { createDynamoDbPlantStore } from "./store/dynamodb-plant-store.ts";

/**
 * The production wiring: the issuer's tokens and the DynamoDB table named by the configuration.
 * At init it starts, concurrently and without waiting, the two things a cold start's first request would
 * otherwise wait for one after the other: the issuer's key set and the store's TLS connection. Either
 * failing is harmless: the request path fetches or connects again and answers 503 if it cannot.
 */
export function productionDependencies(config: Config): Dependencies {
  const store = createDynamoDbPlantStore({
    tableName: config.tableName,
    region: config.region,
    endpoint: config.dynamoDbEndpoint,
    credentials: config.credentials,
    deadlineMs: config.storeDeadlineMs,
    attemptTimeoutMs: config.storeAttemptTimeoutMs,
    maxAttempts: config.storeMaxAttempts,
  });
  void store.prewarm();
  return {
    functionName: config.functionName,
    functionVersion: config.functionVersion,
    authenticate: createAuthenticator(config, { prefetchKeys: true }),
    store,
  };
}
