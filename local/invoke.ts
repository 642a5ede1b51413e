/**
 * `npm run invoke -- <event.json>`: runs the bundled handler once on an API Gateway event file, against
 * the local store, and prints its result. `${LOCAL_TOKEN}` in the file becomes a fresh local token.
 * Only one process can open the embedded store: when `npm start` runs on the same data dir, the handler
 * uses that server's store and key set; otherwise this command opens the store itself for the call.
 */
import { readFile } from "node:fs/promises";
import type { ApiGatewayEvent, ApiGatewayResult } from "../lambda/http/api-gateway.ts";
import { loadBundledHandler } from "./bundled-handler.ts";
import { handlerEnvironment } from "./handler-environment.ts";
import { startLocalApi } from "./local-api.ts";
import { loadLocalIssuer } from "./local-issuer.ts";
import { dataDirFrom, dynamoDbEndpointFrom, tableNameFrom } from "./local-settings.ts";
import { findRunningServer } from "./server-record.ts";

// biome-ignore lint/suspicious/noTemplateCurlyInString: the literal placeholder the event files carry
const TOKEN_PLACEHOLDER = "${LOCAL_TOKEN}";

async function invoke(eventPath: string): Promise<ApiGatewayResult> {
  const dataDir = dataDirFrom(process.env);
  const issuer = await loadLocalIssuer(dataDir);
  const eventText = await readFile(eventPath, "utf8");
  const event = JSON.parse(eventText.replaceAll(TOKEN_PLACEHOLDER, await issuer.mint())) as ApiGatewayEvent;

  const running = await findRunningServer(dataDir, issuer);
  if (running) {
    const handler = await loadBundledHandler(handlerEnvironment(running.store, running.jwksUrl));
    return handler(event);
  }
  const api = await startLocalApi({
    port: 0,
    dataDir,
    dynamoDbEndpoint: dynamoDbEndpointFrom(process.env),
    tableName: tableNameFrom(process.env),
  });
  try {
    return await api.invoke(event);
  } finally {
    await api.close();
  }
}

const [eventPath, ...extra] = process.argv.slice(2);
if (eventPath === undefined || extra.length > 0) {
  console.error("usage: npm run invoke -- <event.json>   (ready ones: local/events/*.json)");
  process.exit(1);
}
// Logs go to stderr, as with `sam local invoke`, so that stdout carries the result alone.
const writeResult = process.stdout.write.bind(process.stdout);
process.stdout.write = process.stderr.write.bind(process.stderr);
try {
  const result = await invoke(eventPath);
  // Exits once the result is out: the handler's instance may keep timers running, as it would in Lambda.
  writeResult(`${JSON.stringify(result, null, 2)}\n`, () => process.exit(0));
} catch (error) {
  console.error(`npm run invoke failed: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
}
