/**
 * The function's configuration, read once from the environment at cold start. A missing or malformed
 * value fails the import with a message that names the variable, rather than a confusing request later.
 */
export interface Config {
  tableName: string;
  region: string;
  dynamoDbEndpoint: string;
  credentials: { accessKeyId: string; secretAccessKey: string; sessionToken: string | undefined };
  issuer: string;
  jwksUrl: string;
  audiences: string[];
  clientIds: string[];
  requiredScope: string;
  storeDeadlineMs: number;
  storeAttemptTimeoutMs: number;
}

export type Environment = Record<string, string | undefined>;

function required(env: Environment, name: string): string {
  const value = env[name]?.trim();
  if (!value) throw new Error(`environment variable ${name} must be set`);
  return value;
}

function commaList(env: Environment, name: string): string[] {
  return (env[name] ?? "")
    .split(",")
    .map((item) => item.trim())
    .filter((item) => item !== "");
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

function httpUrl(name: string, value: string): string {
  if (!/^https?:\/\/[^/]/i.test(value)) throw new Error(`${name} must be an http(s) URL, got '${value}'`);
  return value.replace(/\/+$/, "");
}

export function readConfig(env: Environment): Config {
  const region = env.AWS_REGION?.trim() || env.AWS_DEFAULT_REGION?.trim() || "";
  if (!region) throw new Error("environment variable AWS_REGION must be set");
  const issuer = required(env, "JWT_ISSUER");
  const storeDeadlineMs = positiveInteger(env, "STORE_DEADLINE_MS", 3000);
  return {
    tableName: required(env, "TABLE_NAME"),
    region,
    // AWS_ENDPOINT_URL_DYNAMODB is the SDKs' standard variable for a service-specific endpoint.
    dynamoDbEndpoint: httpUrl(
      "the DynamoDB endpoint",
      env.AWS_ENDPOINT_URL_DYNAMODB?.trim() ||
        env.AWS_ENDPOINT_URL?.trim() ||
        `https://dynamodb.${region}.amazonaws.com`,
    ),
    credentials: {
      accessKeyId: required(env, "AWS_ACCESS_KEY_ID"),
      secretAccessKey: required(env, "AWS_SECRET_ACCESS_KEY"),
      sessionToken: env.AWS_SESSION_TOKEN?.trim() || undefined,
    },
    issuer,
    jwksUrl: httpUrl(
      "JWKS_URL",
      env.JWKS_URL?.trim() || `${issuer.replace(/\/+$/, "")}/.well-known/jwks.json`,
    ),
    audiences: commaList(env, "JWT_AUDIENCE"),
    clientIds: commaList(env, "JWT_CLIENT_IDS"),
    requiredScope: env.REQUIRED_SCOPE?.trim() || "plants/write",
    storeDeadlineMs,
    storeAttemptTimeoutMs: positiveInteger(env, "STORE_ATTEMPT_TIMEOUT_MS", Math.min(1000, storeDeadlineMs)),
  };
}
