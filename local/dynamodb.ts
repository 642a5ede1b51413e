/**
 * The DynamoDB the local run, the tests and the benchmarks use: dynalite, in-process, on a loopback
 * port, with its data in LevelDB under a folder (or in memory), and the plants table created on it.
 */
import type { AddressInfo } from "node:net";
import { AwsClient } from "aws4fetch";
import dynalite from "dynalite";

export const LOCAL_REGION = "us-east-1";
export const LOCAL_CREDENTIALS = { accessKeyId: "local", secretAccessKey: "local" } as const;

/** Who signs the calls: DynamoDB Local keeps one set of tables per access key and region. */
export interface DynamoDbIdentity {
  region: string;
  credentials: { accessKeyId: string; secretAccessKey: string; sessionToken?: string | undefined };
}

export const LOCAL_IDENTITY: DynamoDbIdentity = { region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS };

export interface LocalDynamoDb {
  endpoint: string;
  close(): Promise<void>;
}

/** Starts dynalite; `path` keeps the data on disk across restarts, without it the data is in memory. */
export async function startDynalite(options: { path?: string; port?: number } = {}): Promise<LocalDynamoDb> {
  const server = dynalite({
    ...(options.path === undefined ? {} : { path: options.path }),
    createTableMs: 0,
    deleteTableMs: 0,
    updateTableMs: 0,
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, "127.0.0.1", () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve, reject) => server.close((error) => (error ? reject(error) : resolve()))),
  };
}

/** Sends one DynamoDB JSON-protocol call, signed like the function's own, and returns the answer. */
export async function callDynamoDb(
  endpoint: string,
  operation: string,
  input: object,
  identity: DynamoDbIdentity = LOCAL_IDENTITY,
): Promise<{ status: number; body: Record<string, unknown> }> {
  const client = new AwsClient({
    ...identity.credentials,
    service: "dynamodb",
    region: identity.region,
    retries: 0,
  });
  const response = await client.fetch(endpoint, {
    method: "POST",
    headers: {
      "content-type": "application/x-amz-json-1.0",
      "x-amz-target": `DynamoDB_20120810.${operation}`,
    },
    body: JSON.stringify(input),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

/** Creates the plants table (partition key `id`, a Number) unless it exists already. */
export async function ensurePlantsTable(
  endpoint: string,
  tableName: string,
  identity: DynamoDbIdentity = LOCAL_IDENTITY,
): Promise<void> {
  const { status, body } = await callDynamoDb(
    endpoint,
    "CreateTable",
    {
      TableName: tableName,
      AttributeDefinitions: [{ AttributeName: "id", AttributeType: "N" }],
      KeySchema: [{ AttributeName: "id", KeyType: "HASH" }],
      BillingMode: "PAY_PER_REQUEST",
    },
    identity,
  );
  if (status === 200 || String(body.__type).endsWith("ResourceInUseException")) return;
  throw new Error(`could not create table ${tableName}: ${JSON.stringify(body)}`);
}
