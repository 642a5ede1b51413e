/** The local run's settings from the environment, shared by `npm start`, `npm run token` and `npm run invoke`. */
import { mkdir, writeFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { type Environment, httpUrlFrom, isTableName, TABLE_NAME_RULE } from "../lambda/config.ts";

export const DEFAULT_PORT = 3000;
export const DEFAULT_TABLE_NAME = "plants";

export function dataDirFrom(env: Environment): string {
  return resolve(env.PLANTS_DATA_DIR?.trim() || ".data");
}

/**
 * Makes the data dir (private to the user) with a `.gitignore` of `*` in it, wherever it is: git never
 * offers its files (a private signing key among them) for a commit, and Biome, which follows .gitignore
 * files, never reads them.
 */
export async function createDataDir(dataDir: string): Promise<void> {
  await mkdir(dataDir, { recursive: true, mode: 0o700 });
  await writeFile(join(dataDir, ".gitignore"), DATA_DIR_GITIGNORE, { flag: "wx" }).catch((error: unknown) => {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
  });
}

const DATA_DIR_GITIGNORE =
  "# The local run's data (npm start): a private signing key and the store. Never committed.\n*\n";

export function tableNameFrom(env: Environment): string {
  const tableName = env.PLANTS_TABLE?.trim() || DEFAULT_TABLE_NAME;
  if (!isTableName(tableName)) throw new Error(`PLANTS_TABLE must be ${TABLE_NAME_RULE}: '${tableName}'`);
  return tableName;
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
  const endpoint = env.AWS_ENDPOINT_URL_DYNAMODB?.trim();
  return endpoint ? httpUrlFrom("AWS_ENDPOINT_URL_DYNAMODB", endpoint) : undefined;
}
