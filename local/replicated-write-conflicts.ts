/**
 * PLANTS_REPLICATED_WRITE_CONFLICTS: the embedded store answers a create's writes as a table with
 * multi-Region strong consistency does while another Region is writing the same plant, so that the
 * function's answers to it can be tried locally (docs/LOCAL.md). A loopback front before dynalite refuses
 * the first `count` PutItems of each plant id with ReplicatedWriteConflictException (400, nothing
 * written) and passes everything else through. With `:stored`, the other Region's write is the same plant
 * (a caller's retry that reached it) and lands as the first conflict is answered.
 */
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import type { Environment } from "../lambda/config.ts";
import { forwardToDynamoDb, readRequestBody } from "./dynamodb-forward.ts";

export interface ReplicatedWriteConflicts {
  /** PutItems of each plant id refused before one goes through. */
  readonly perPlant: number;
  /** The other Region stored the same plant when the first conflict was answered. */
  readonly storedElsewhere: boolean;
}

const SETTING = "PLANTS_REPLICATED_WRITE_CONFLICTS";
const CONFLICT_TYPE = "com.amazonaws.dynamodb.v20120810#ReplicatedWriteConflictException";

/** `<count>` or `<count>:stored`; unset, empty or 0 injects nothing. */
export function replicatedWriteConflictsFrom(env: Environment): ReplicatedWriteConflicts | undefined {
  const text = env[SETTING]?.trim();
  if (!text) return undefined;
  const match = /^(\d{1,3})(:stored)?$/.exec(text);
  if (match === null) {
    throw new Error(
      `${SETTING} must be a count of conflicts per plant, optionally followed by :stored (like 2 or 1:stored), got '${text}'`,
    );
  }
  const perPlant = Number(match[1]);
  return perPlant === 0 ? undefined : { perPlant, storedElsewhere: match[2] !== undefined };
}

/** How the banner names the setting. */
export function describeReplicatedWriteConflicts({
  perPlant,
  storedElsewhere,
}: ReplicatedWriteConflicts): string {
  const writes = perPlant === 1 ? "the first write" : `the first ${perPlant} writes`;
  const elsewhere = storedElsewhere ? ", the other Region storing the same plant" : "";
  return `${writes} of each plant refused with ReplicatedWriteConflictException${elsewhere} (${SETTING})`;
}

/** Starts the front before the DynamoDB endpoint `upstream`; the store's calls go to `endpoint`. */
export async function startConflictingFront(
  upstream: string,
  conflicts: ReplicatedWriteConflicts,
): Promise<{ endpoint: string; close(): Promise<void> }> {
  const refusedWrites = new Map<string, number>();
  const server = createServer((request, response) => {
    void (async () => {
      const body = await readRequestBody(request);
      const id = putItemPlantId(request, body);
      const refused = id === undefined ? conflicts.perPlant : (refusedWrites.get(id) ?? 0);
      if (id === undefined || refused >= conflicts.perPlant) {
        const answer = await forwardToDynamoDb(upstream, request, body);
        response.writeHead(answer.status, { "content-type": answer.contentType }).end(answer.body);
        return;
      }
      refusedWrites.set(id, refused + 1);
      if (refused === 0 && conflicts.storedElsewhere) await forwardToDynamoDb(upstream, request, body);
      response.writeHead(400, { "content-type": "application/x-amz-json-1.0" }).end(
        JSON.stringify({
          __type: CONFLICT_TYPE,
          message:
            "The request was rejected because one or more items in the request are being modified by a request in another Region.",
        }),
      );
    })().catch(() => request.socket.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The plant id a PutItem writes (its `id` Number, as text), or undefined for any other call. */
function putItemPlantId(request: IncomingMessage, body: Buffer): string | undefined {
  if (request.headers["x-amz-target"] !== "DynamoDB_20120810.PutItem") return undefined;
  const item = (JSON.parse(body.toString("utf8")) as { Item?: { id?: { N?: unknown } } }).Item;
  return typeof item?.id?.N === "string" ? item.id.N : undefined;
}
