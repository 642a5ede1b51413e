/** The local run's settings from the environment, shared by `npm start`, `npm run token` and `npm run invoke`. */
import { resolve } from "node:path";

type Environment = Record<string, string | undefined>;

export const DEFAULT_PORT = 3000;
export const DEFAULT_TABLE_NAME = "plants";

export function dataDirFrom(env: Environment): string {
  return resolve(env.PLANTS_DATA_DIR?.trim() || ".data");
}

export function tableNameFrom(env: Environment): string {
  return env.PLANTS_TABLE?.trim() || DEFAULT_TABLE_NAME;
}

export function portFrom(env: Environment): number {
  const text = env.PORT?.trim();
  if (!text) return DEFAULT_PORT;
  const port = Number(text);
  if (!Number.isInteger(port) || port < 0 || port > 65_535) {
    throw new Error(`PORT must be a port number (0 picks a free one), got '${text}'`);
  }
  return port;
}

/** AWS_ENDPOINT_URL_DYNAMODB: use that DynamoDB instead of the embedded one. */
export function dynamoDbEndpointFrom(env: Environment): string | undefined {
  return env.AWS_ENDPOINT_URL_DYNAMODB?.trim() || undefined;
}
