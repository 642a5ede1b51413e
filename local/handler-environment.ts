/** The Lambda environment variables the local run gives the bundled handler, as the stack gives them in AWS. */

import { DELIVERED_KEY_SET_VARIABLE, deliverableKeySet } from "../infra/key-set-delivery/public-key-set.ts";
import { type Environment, regionFrom } from "../lambda/config.ts";
import { DEFAULT_REQUIRED_SCOPE } from "../lambda/defaults.ts";
import { type DynamoDbIdentity, LOCAL_CREDENTIALS, LOCAL_IDENTITY, LOCAL_REGION } from "./dynamodb.ts";
import { LOCAL_ISSUER } from "./local-issuer.ts";
import { LOCAL_CLIENT_ID } from "./token-issuer.ts";

/** The DynamoDB the handler writes to: the embedded dynalite, or the one AWS_ENDPOINT_URL_DYNAMODB names. */
export interface StoreTarget {
  endpoint: string;
  embedded: boolean;
  tableName: string;
}

/**
 * The embedded store is always signed for with the local dummy credentials, so the user's real ones never
 * leave for it; another endpoint (a real table, DynamoDB Local) gets the user's AWS_* variables when set.
 */
export function storeIdentity(store: StoreTarget, env: Environment): DynamoDbIdentity {
  if (store.embedded) return LOCAL_IDENTITY;
  const accessKeyId = env.AWS_ACCESS_KEY_ID?.trim();
  const secretAccessKey = env.AWS_SECRET_ACCESS_KEY?.trim();
  return {
    region: regionFrom(env) ?? LOCAL_REGION,
    credentials:
      accessKeyId && secretAccessKey
        ? { accessKeyId, secretAccessKey, sessionToken: env.AWS_SESSION_TOKEN?.trim() || undefined }
        : LOCAL_CREDENTIALS,
  };
}

/** The function's own settings a user may give the local run too, as they would give them to the stack. */
const PASSED_THROUGH = ["STORE_DEADLINE_MS", "STORE_ATTEMPT_TIMEOUT_MS", "STORE_MAX_ATTEMPTS"] as const;

/** The function's environment, with where the local issuer publishes its key set and the set itself. */
export function handlerEnvironment(
  store: StoreTarget,
  { jwksUrl, jwks }: { jwksUrl: string; jwks: object },
  env: Environment = process.env,
): Record<string, string> {
  const { region, credentials } = storeIdentity(store, env);
  return {
    TABLE_NAME: store.tableName,
    AWS_REGION: region,
    AWS_ACCESS_KEY_ID: credentials.accessKeyId,
    AWS_SECRET_ACCESS_KEY: credentials.secretAccessKey,
    AWS_SESSION_TOKEN: credentials.sessionToken ?? "",
    AWS_ENDPOINT_URL_DYNAMODB: store.endpoint,
    JWT_ISSUER: LOCAL_ISSUER,
    JWKS_URL: jwksUrl,
    // As the stack's deploy-time read hands it over (infra/delivered-key-set.ts): the handler trusts these
    // keys from its first request and confirms them at JWKS_URL without making a request wait.
    [DELIVERED_KEY_SET_VARIABLE]: deliverableKeySet(jwks),
    JWT_CLIENT_IDS: LOCAL_CLIENT_ID,
    // Local tokens carry no audience; a value left in the user's shell must not make them all fail.
    JWT_AUDIENCE: "",
    REQUIRED_SCOPE: DEFAULT_REQUIRED_SCOPE,
    ...Object.fromEntries(
      PASSED_THROUGH.flatMap((name) => (env[name]?.trim() ? [[name, env[name].trim()]] : [])),
    ),
  };
}
