import { createAuthenticator } from "./auth/authenticate.ts";
import { createIssuerKeys } from "./auth/issuer-keys.ts";
import type { Config } from "./config.ts";
import type { Dependencies } from "./http/create-handler.ts";
import { createDynamoDbPlantStore } from "./store/dynamodb-plant-store.ts";
import { sampledInvocationTracing } from "./tracing/sampled-tracing.ts";

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
 * are refreshed after answers; with active tracing, sampled invocations are traced.
 */
export function productionDependencies(
  config: Config,
  levers: ColdStartLevers = SHIPPED_LEVERS,
): Dependencies {
  const tracing =
    config.xrayDaemonAddress === undefined
      ? undefined
      : sampledInvocationTracing({
          daemonAddress: config.xrayDaemonAddress,
          tableName: config.tableName,
          region: config.region,
        });
  const store = createDynamoDbPlantStore({
    tableName: config.tableName,
    region: config.region,
    endpoint: config.dynamoDbEndpoint,
    credentials: config.credentials,
    deadlineMs: config.storeDeadlineMs,
    attemptTimeoutMs: config.storeAttemptTimeoutMs,
    maxAttempts: config.storeMaxAttempts,
    observeCall: tracing?.observeDynamoDbCall,
  });
  if (levers.prewarmStore) void store.prewarm();
  const keys = createIssuerKeys(config, {
    prefetchKeys: true,
    deliveredKeySet: config.deliveredKeySet,
  });
  return {
    functionName: config.functionName,
    functionVersion: config.functionVersion,
    authenticate: createAuthenticator(config, { keys }),
    requiredScope: config.requiredScope,
    afterAnswer: () => keys.refreshInBackground(),
    store,
    ...(tracing ? { traceInvocation: tracing.run } : {}),
  };
}
