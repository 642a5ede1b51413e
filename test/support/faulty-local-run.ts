import { type LocalDynamoDb, startDynalite } from "../../local/dynamodb.ts";
import { type FaultyDynamoDb, startFaultyDynamoDb } from "./faulty-dynamodb.ts";
import { GENEROUS_STORE_TIMEOUTS, type RunningServer, startServer, tempDataDir } from "./local-run.ts";

/** `npm start` writing through a faulty DynamoDB endpoint in front of a real dynalite. */
export interface FaultyLocalRun {
  dynamoDb: LocalDynamoDb;
  /** Proxies every call until a test scripts its faults. */
  faulty: FaultyDynamoDb;
  server: RunningServer;
  dataDir: string;
  /** Stops the server, the faulty endpoint and dynalite; the data dir goes in local-run.ts's cleanUp. */
  close(): Promise<void>;
}

/** `env` adds to npm start's environment (CORS origins, store settings). */
export async function startLocalRunOnFaultyStore(env: Record<string, string> = {}): Promise<FaultyLocalRun> {
  const dynamoDb = await startDynalite();
  const faulty = await startFaultyDynamoDb(dynamoDb.endpoint);
  faulty.script([], "proxy"); // npm start creates its table through it
  const dataDir = await tempDataDir();
  const server = await startServer({
    PLANTS_DATA_DIR: dataDir,
    AWS_ENDPOINT_URL_DYNAMODB: faulty.url,
    // A throttle answered late on a busy machine must not become a timeout, which would change the message.
    ...GENEROUS_STORE_TIMEOUTS,
    ...env,
  });
  return {
    dynamoDb,
    faulty,
    server,
    dataDir,
    async close() {
      await server.stop();
      await faulty.close();
      await dynamoDb.close();
    },
  };
}
