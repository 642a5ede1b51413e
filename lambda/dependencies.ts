import { createAuthenticator } from "./auth/authenticate.ts";
import type { Config } from "./config.ts";
import type { Dependencies } from "./http/create-handler.ts";
import { createDynamoDbPlantStore } from "./store/dynamodb-plant-store.ts";

/** The production wiring: the issuer's tokens and the DynamoDB table named by the configuration. */
export function productionDependencies(config: Config): Dependencies {
  return {
    functionName: config.functionName,
    authenticate: createAuthenticator(config, { prefetchKeys: true }),
    store: createDynamoDbPlantStore({
      tableName: config.tableName,
      region: config.region,
      endpoint: config.dynamoDbEndpoint,
      credentials: config.credentials,
      deadlineMs: config.storeDeadlineMs,
      attemptTimeoutMs: config.storeAttemptTimeoutMs,
    }),
  };
}
