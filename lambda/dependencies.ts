import { createAuthenticator } from "./auth/authenticate.ts";
import { createIssuerKeys } from "./auth/issuer-keys.ts";
import type { Config } from "./config.ts";
import { DEFAULT_REQUIRED_SCOPE } from "./defaults.ts";
import type { Dependencies } from "./http/create-handler.ts";
import { createDynamoDbPlantStore } from "./store/dynamodb-plant-store.ts";

/**
 * What the function starts at init, so that a cold start's first request does not wait for it. The
 * bench (bench/entries/) builds the handler without it, to measure what it saves. (The key set is fetched
 * at init only when none was delivered, which the bench measures as the handler without delivered keys.)
 */
export interface ColdStartLevers {
  /** Open the store's TLS connection at init, without sending a request on it. */
  prewarmStore: boolean;
}

/** The levers the function ships with. */
export const SHIPPED_LEVERS: ColdStartLevers = { prewarmStore: true };

/**
 * The production wiring: the issuer's tokens and the DynamoDB table named by the configuration. At init it
 * opens the store's TLS connection and, unless the key set was delivered, fetches it, without waiting:
 * either failing is harmless (the request connects or fetches again, 503 if it cannot). The issuer's keys
 * are refreshed after answers.
 */
export function productionDependencies(
  config: Config,
  levers: ColdStartLevers = SHIPPED_LEVERS,
): Dependencies {
  const store = createDynamoDbPlantStore({
    tableName: config.tableName,
    region: config.region,
    endpoint: config.dynamoDbEndpoint,
    credentials: config.credentials,
    deadlineMs: config.storeDeadlineMs,
    attemptTimeoutMs: config.storeAttemptTimeoutMs,
    maxAttempts: config.storeMaxAttempts,
  });
  if (levers.prewarmStore) void store.prewarm();
  const keys = createIssuerKeys(config, {
    prefetchKeys: true,
    deliveredKeySet: config.deliveredKeySet,
  });
  const authenticator = createAuthenticator(config, { keys });
  return {
    functionName: config.functionName,
    functionVersion: config.functionVersion,
    // A deployment may give the write scope its issuer's name (REQUIRED_SCOPE); other scopes are the table's.
    authenticate: (header, scope) =>
      authenticator(header, scope === DEFAULT_REQUIRED_SCOPE ? config.requiredScope : scope),
    afterAnswer: () => keys.refreshInBackground(),
    store,
  };
}
