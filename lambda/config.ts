import { commaList } from "./comma-list.ts";
import {
  DEFAULT_REQUIRED_SCOPE,
  DEFAULT_STORE_ATTEMPT_TIMEOUT_MS,
  DEFAULT_STORE_DEADLINE_MS,
  DEFAULT_STORE_MAX_ATTEMPTS,
} from "./defaults.ts";

export type Environment = Record<string, string | undefined>;

function required(env: Environment, name: string): string {
  const value = env[name]?.trim();
  if (!value) throw new Error(`environment variable ${name} must be set`);
  return value;
}

/** What DynamoDB accepts as a table name, in the words an error message uses. */
export const TABLE_NAME_RULE = "a DynamoDB table name (3 to 255 letters, digits, _ - .)";

/** Whether `name` is a DynamoDB table name: TABLE_NAME here, `-c tableName` for the stack, PLANTS_TABLE locally. */
export function isTableName(name: string): boolean {
  return /^[A-Za-z0-9_.-]{3,255}$/.test(name);
}

function positiveInteger(env: Environment, name: string, fallback: number): number {
  const text = env[name]?.trim();
  if (!text) return fallback;
  const value = Number(text);
  if (!Number.isSafeInteger(value) || value <= 0) {
    throw new Error(`environment variable ${name} must be a positive integer, got '${text}'`);
  }
  return value;
}

/**
 * The URL in the environment variable `name` (http or https, with a host), without trailing slashes; the
 * error names the variable, so that the user knows which setting to fix.
 */
export function httpUrlFrom(name: string, value: string): string {
  const url = URL.canParse(value) ? new URL(value) : undefined;
  if (url === undefined || (url.protocol !== "http:" && url.protocol !== "https:") || url.hostname === "") {
    throw new Error(`${name} must be a URL (http:// or https://): '${value}'`);
  }
  return value.replace(/\/+$/, "");
}

/** The region the AWS SDKs would use: AWS_REGION, else AWS_DEFAULT_REGION; `undefined` when neither is set. */
export function regionFrom(env: Environment): string | undefined {
  return env.AWS_REGION?.trim() || env.AWS_DEFAULT_REGION?.trim() || undefined;
}

/** The DynamoDB endpoint a user set, in the SDKs' standard variables; `undefined` when neither is set. */
function dynamoDbEndpointFrom(env: Environment): string | undefined {
  // AWS_ENDPOINT_URL_DYNAMODB is the SDKs' standard variable for a service-specific endpoint.
  for (const name of ["AWS_ENDPOINT_URL_DYNAMODB", "AWS_ENDPOINT_URL"]) {
    const value = env[name]?.trim();
    if (value) return httpUrlFrom(name, value);
  }
  return undefined;
}

/**
 * The function's configuration, read once from the environment at cold start. A missing or malformed
 * value fails the import with a message that names the variable, rather than a confusing request later.
 */
export type Config = ReturnType<typeof readConfig>;

export function readConfig(env: Environment) {
  const region = regionFrom(env);
  if (!region) throw new Error("environment variable AWS_REGION must be set");
  const issuer = required(env, "JWT_ISSUER");
  const storeDeadlineMs = positiveInteger(env, "STORE_DEADLINE_MS", DEFAULT_STORE_DEADLINE_MS);
  const audiences = commaList(env.JWT_AUDIENCE);
  const clientIds = commaList(env.JWT_CLIENT_IDS);
  const functionName = env.AWS_LAMBDA_FUNCTION_NAME?.trim();
  // Without either, any token the issuer signs for any of its clients would be accepted. The local run
  // and tests may choose that; a deployed function may not.
  if (functionName && audiences.length === 0 && clientIds.length === 0) {
    throw new Error("environment variable JWT_CLIENT_IDS or JWT_AUDIENCE must be set in a deployed function");
  }
  const tableName = required(env, "TABLE_NAME");
  if (!isTableName(tableName)) {
    throw new Error(`environment variable TABLE_NAME must be ${TABLE_NAME_RULE}, got '${tableName}'`);
  }
  return {
    tableName,
    region,
    dynamoDbEndpoint: dynamoDbEndpointFrom(env) ?? `https://dynamodb.${region}.amazonaws.com`,
    credentials: {
      accessKeyId: required(env, "AWS_ACCESS_KEY_ID"),
      secretAccessKey: required(env, "AWS_SECRET_ACCESS_KEY"),
      sessionToken: env.AWS_SESSION_TOKEN?.trim() || undefined,
    },
    issuer,
    jwksUrl: env.JWKS_URL?.trim()
      ? httpUrlFrom("JWKS_URL", env.JWKS_URL.trim())
      : `${httpUrlFrom("JWT_ISSUER", issuer)}/.well-known/jwks.json`,
    /**
     * The issuer's key set delivered with the deployment (JWKS_JSON), trusted at once; unset: none.
     * Written by the stack; one that is not a key set is logged and the issuer's fetched (IssuerKeys),
     * rather than failing every cold start over a key set the issuer can still give.
     */
    deliveredKeySet: env.JWKS_JSON?.trim() || undefined,
    audiences,
    clientIds,
    requiredScope: env.REQUIRED_SCOPE?.trim() || DEFAULT_REQUIRED_SCOPE,
    storeDeadlineMs,
    storeAttemptTimeoutMs: positiveInteger(
      env,
      "STORE_ATTEMPT_TIMEOUT_MS",
      Math.min(DEFAULT_STORE_ATTEMPT_TIMEOUT_MS, storeDeadlineMs),
    ),
    storeMaxAttempts: positiveInteger(env, "STORE_MAX_ATTEMPTS", DEFAULT_STORE_MAX_ATTEMPTS),
    /** The name the metrics are published under: the Lambda function's, or "local" elsewhere. */
    functionName: functionName || "local",
    /** The published version running (AWS_LAMBDA_FUNCTION_VERSION), or "$LATEST": `Fault`'s version. */
    functionVersion: env.AWS_LAMBDA_FUNCTION_VERSION?.trim() || "$LATEST",
  };
}
