/**
 * A failed create says "the plant may have been stored" exactly when some POST of that call may have
 * reached the API without an answer telling its outcome (it timed out, got no answer though a connection
 * may have been made, or got a gateway's 502 or 504) and the call did not end in an answer that settles
 * it (409, 400). Node names a connection never made in its error's cause code; a browser never does.
 */
import { describe, expect, it } from "vitest";
import { createPlantStoreClient, PlantStoreError } from "../../client/index.ts";
import { freePort } from "../support/free-port.ts";
import {
  clientOnFakes,
  failing,
  failureOf,
  inTurn,
  neverAnswers,
  PLANTS_URL,
  type Responder,
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

/** The failure of a create whose POSTs are answered in this order, the last one repeated. */
function failureAfter(answers: Responder[]) {
  const options = { retry: { attemptTimeoutMs: 1000 } };
  return clientOnFakes({ answerPlants: inTurn(...answers), options }).failure();
}

describe("no POST can have reached the API: no ending", () => {
  it("a real connection refused, every attempt", async () => {
    // Nothing listens on a free port: Node's own fetch error, as it is, names the refusal.
    const baseUrl = `http://127.0.0.1:${await freePort()}`;
    const client = createPlantStoreClient({ baseUrl, credentials: { token: "t" }, random: () => 0 });
    const error = await failureOf(client.createPlant({ id: 1n, name: "Fern" }));
    expect(error).toBeInstanceOf(PlantStoreError);
    expect(error).toMatchObject({
      kind: "network",
      attempts: 3,
      message: `POST ${baseUrl}/plants: no answer (fetch failed: ECONNREFUSED)`,
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
    const error = await failureAfter([failed(code)]);
    expect(error).toMatchObject({ kind: "network", status: undefined, attempts: 3 });
    expect(error.message).toBe(`POST ${PLANTS_URL}: no answer (fetch failed: ${code})`);
  });
});

describe("a POST may have reached the API unanswered: the ending, unless the last answer settles it", () => {
  it.each([
    ["a reset connection, every attempt", [failed("ECONNRESET")], "network", true],
    ["a browser's refusal (no code), every attempt", [browserRefusal], "network", true],
    ["a timeout, every attempt", [neverAnswers], "timeout", true],
    ["a timeout, then refused connections", [neverAnswers, failed("ECONNREFUSED")], "network", true],
    ["a timeout, then 503s", [neverAnswers, failing(503)], "unavailable", true],
    ["a 502, then a 500", [failing(502), failing(500)], "server-error", true],
    ["a 504, then a 403", [failing(504), failing(403)], "forbidden", true],
    ["a timeout, then a 409 (another plant has the id)", [neverAnswers, failing(409)], "conflict", false],
    [
      "a 504, then a 400 (the request is refused as it is)",
      [failing(504), failing(400)],
      "invalid-request",
      false,
    ],
  ] as const)("%s", async (_case, answers, kind, ending) => {
    const error = await failureAfter([...answers]);
    expect(error).toBeInstanceOf(PlantStoreError);
    expect(error.kind).toBe(kind);
    expect(error.message.endsWith(ENDING)).toBe(ending);
    expect(error.stack?.split("\n")[0]?.endsWith("(200 if it was)")).toBe(ending);
  });
});
