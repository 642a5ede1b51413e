/**
 * Aborting a call: a create's own signal stops that call alone, at once, wherever it waits (a token, its
 * POST, the wait before the next), with the signal's reason as it was given, and leaves the client as it
 * was (its token, other calls, later calls); no listener stays on a caller's signal once a call is over.
 * The client's own signal still stops every call. Time is the fake clock's: "at once" is "before the
 * clock moved".
 */
import { getEventListeners } from "node:events";
import { describe, expect, it } from "vitest";
import type { PlantStoreClientOptions } from "../../client/index.ts";
import { FakeClock } from "../support/fake-clock.ts";
import {
  answerAfter,
  clientOnFakes,
  json,
  letRun,
  neverAnswers,
  type Responder,
  START,
  settle,
  tokenAnswer,
} from "./fakes.ts";

const fern = (id: bigint) => ({ id, name: "Fern" });
const stored: Responder = () => json(200, { name: "Fern" });

/** A client on the fake clock whose token endpoint answers `answerToken` and whose API answers `answerPlants`. */
function setup(
  answerPlants: Responder,
  answerToken: Responder = () => tokenAnswer("token-1"),
  options: Partial<PlantStoreClientOptions> = {},
  clock?: FakeClock,
) {
  return clientOnFakes({ answerPlants, answerToken, options: { random: () => 0, ...options }, clock });
}

const _abortListeners = (signal: AbortSignal) => getEventListeners(signal, "abort").length;

describe("a create's own signal", () => {
  it("stops it at once while it waits for a token another call waits for too; the token fetch goes on for that one", async () => {
    const clock = new FakeClock({ now: START });
    const { client, tokenRequests, plantRequests } = setup(
      stored,
      answerAfter(clock, 1000, () => tokenAnswer("token-1")),
      {},
      clock,
    );
    const controller = new AbortController();
    const other = client.createPlant(fern(1n));
    const aborted = client.createPlant(fern(2n), { signal: controller.signal }).catch((thrown) => thrown);
    await letRun();
    const reason = new Error("the user left the page");
    controller.abort(reason);
    expect(await settle(clock, aborted)).toBe(reason);
    expect(clock.now()).toBe(START);

    expect(await settle(clock, other)).toEqual({ name: "Fern" });
    expect(tokenRequests()).toHaveLength(1);
    expect(plantRequests().map((request) => JSON.parse(request.body).id)).toEqual([1]);
  });

  it("stops it at once while its POST is in flight, with the signal's reason as given, not a PlantStoreError", async () => {
    const { clock, client, plantRequests } = setup(neverAnswers);
    const controller = new AbortController();
    const call = client.createPlant(fern(1n), { signal: controller.signal }).catch((thrown) => thrown);
    await letRun();
    expect(plantRequests()).toHaveLength(1);
    controller.abort();
    const error = await settle(clock, call);
    // AbortController.abort() with no reason gives a DOMException named AbortError: thrown as it is.
    expect(error).toBe(controller.signal.reason);
    expect(error).toMatchObject({ name: "AbortError" });
    expect(clock.now()).toBe(START);
    expect(plantRequests()).toHaveLength(1);
  });
});
