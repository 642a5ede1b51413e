/**
 * `npm run example [-- <id>]`: creates a plant whose id is beyond a JavaScript number's exact range
 * (2^53 + 1 by default) through the client in client/, against the local run (`npm start`, whose app
 * client is in <data dir>/client.json), or against a deployed stack when PLANT_STORE_BASE_URL,
 * PLANT_STORE_TOKEN_URL, PLANT_STORE_CLIENT_ID and PLANT_STORE_CLIENT_SECRET are set (see the README).
 */
import { type ClientCredentials, createPlantStoreClient, plantIdFrom } from "../client/index.ts";
import { localClientPath, readLocalClient } from "../local/local-client.ts";
import { dataDirFrom } from "../local/local-settings.ts";

const STACK_VARIABLES = [
  "PLANT_STORE_BASE_URL",
  "PLANT_STORE_TOKEN_URL",
  "PLANT_STORE_CLIENT_ID",
  "PLANT_STORE_CLIENT_SECRET",
] as const;

async function target(): Promise<{ baseUrl: string; credentials: ClientCredentials }> {
  const env = process.env;
  const [baseUrl, tokenUrl, clientId, clientSecret] = STACK_VARIABLES.map((name) => env[name]?.trim() ?? "");
  if (baseUrl || tokenUrl || clientId || clientSecret) {
    const missing = STACK_VARIABLES.filter((name) => !env[name]?.trim());
    if (missing.length > 0)
      throw new Error(`set ${missing.join(", ")} too, or none of them for the local run`);
    return {
      baseUrl: baseUrl ?? "",
      credentials: { clientId: clientId ?? "", clientSecret: clientSecret ?? "", tokenUrl: tokenUrl ?? "" },
    };
  }
  const dataDir = dataDirFrom(env);
  const local = await readLocalClient(dataDir);
  if (!local)
    throw new Error(`no app client in ${localClientPath(dataDir)}: start the local API first (npm start)`);
  return {
    baseUrl: local.baseUrl,
    credentials: { clientId: local.clientId, clientSecret: local.clientSecret, tokenUrl: local.tokenUrl },
  };
}

try {
  const id = plantIdFrom(process.argv[2] ?? 2n ** 53n + 1n);
  const { baseUrl, credentials } = await target();
  const client = createPlantStoreClient({ baseUrl, credentials });
  const plant = await client.createPlant({ id, name: "Fern", tag: "fern" });
  // An identical replay answers the same 200: running this again is safe.
  console.log(`created plant ${id} at ${client.plantsUrl}: ${JSON.stringify(plant)}`);
} catch (error) {
  console.error(`npm run example failed: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
}
