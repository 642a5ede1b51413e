/**
 * A failed create says "the plant may have been stored" exactly when some POST of that call may have
 * reached the API without an answer telling its outcome (it timed out, got no answer though a connection
 * may have been made, or got a gateway's 502 or 504) and the call did not end in an answer that settles
 * it (409, 400). Node names a connection never made in its error's cause code; a browser never does.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { describe, expect, it } from "vitest";
import { createPlantStoreClient, PlantStoreError } from "../../client/index.ts";
import {
  clientOnFakes,
  inTurn,
  json,
  neverAnswers,
  PLANTS_URL,
  type Responder,
  settle,
  tokenAnswer,
} from "./fakes.ts";

const ENDING = "; the plant may have been stored: sending the same create again is safe (200 if it was)";

/** A fetch failure as Node's fetch gives it, its cause carrying `code`. */
const failed = (code: string) => () => {
  throw new TypeError("fetch failed", { cause: Object.assign(new Error(`connect ${code}`), { code }) });
};
/** What a browser says, whatever happened: no code. */
const browserRefusal = () => {
  throw new TypeError("Failed to fetch");
};
const timesOut: Responder = (_request, signal) => neverAnswers(signal);
const status =
  (code: number, headers: Record<string, string> = {}) =>
  () =>
    json(code, { error: code, message: `said ${code}` }, headers);

/** The failure of a create whose POSTs are answered in this order, the last one repeated. */
async function failureOf(answers: Responder[], answerToken: Responder = () => tokenAnswer("token-1")) {
  const { clock, client } = clientOnFakes({
    answerPlants: inTurn(...answers),
    answerToken,
    options: { random: () => 0, retry: { attemptTimeoutMs: 1000 } },
  });
  return (await settle(clock, client.createPlant({ id: 1n, name: "Fern" })).catch(
    (thrown: unknown) => thrown,
  )) as PlantStoreError;
}

describe("no POST can have reached the API: no ending", () => {
  it("a real connection refused, every attempt", async () => {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as AddressInfo;
    await new Promise((resolve) => server.close(resolve));
    const client = createPlantStoreClient({
      baseUrl: `http://127.0.0.1:${port}`,
      credentials: { token: "t" },
      random: () => 0,
    });
    const error = await client.createPlant({ id: 1n, name: "Fern" }).catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(PlantStoreError);
    expect(error).toMatchObject({
      kind: "network",
      attempts: 3,
      message: `POST http://127.0.0.1:${port}/plants: no answer (fetch failed: ECONNREFUSED)`,
    });
  });

  it.each([
    "ECONNREFUSED",
    "ENOTFOUND",
    "EAI_AGAIN",
    "ENETUNREACH",
    "EHOSTUNREACH",
    "UND_ERR_CONNECT_TIMEOUT",
  ])("%s, every attempt", async (code) => {
    const error = await failureOf([failed(code)]);
    expect(error).toMatchObject({ kind: "network", attempts: 3 });
    expect(error.message).toBe(`POST ${PLANTS_URL}: no answer (fetch failed: ${code})`);
  });
});

describe("a POST may have reached the API unanswered: the ending, unless the last answer settles it", () => {
  it.each([
    ["a reset connection, every attempt", [failed("ECONNRESET")], "network", true],
    ["a browser's refusal (no code), every attempt", [browserRefusal], "network", true],
    ["a timeout, then refused connections", [timesOut, failed("ECONNREFUSED")], "network", true],
    ["a timeout, then 503s", [timesOut, status(503)], "unavailable", true],
    ["a 502, then a 500", [status(502), status(500)], "server-error", true],
    ["a 504, then a 403", [status(504), status(403)], "forbidden", true],
    ["a timeout, then a 409 (another plant has the id)", [timesOut, status(409)], "conflict", false],
    [
      "a 504, then a 400 (the request is refused as it is)",
      [status(504), status(400)],
      "invalid-request",
      false,
    ],
  ] as const)("%s", async (_case, answers, kind, ending) => {
    const error = await failureOf([...answers]);
    expect(error).toBeInstanceOf(PlantStoreError);
    expect(error.kind).toBe(kind);
    expect(error.message.endsWith(ENDING)).toBe(ending);
    expect(error.stack?.split("\n")[0]?.endsWith("(200 if it was)")).toBe(ending);
  });
});
