/**
 * Aborting a call: a create's own signal stops that call alone, at once, wherever it waits (a token, its
 * POST, the wait before the next), with the signal's reason as it was given, and leaves the client as it
 * was (its token, other calls). The client's own signal stops its calls the same way. Time is the fake
 * clock's: "at once" is "before the clock moved".
 */
import { getEventListeners } from "node:events";
import { describe, expect, it } from "vitest";
import { FakeClock } from "../support/fake-clock.ts";
import {
  answerAfter,
  clientOnFakes,
  failing,
  failureOf,
  inTurn,
  letRun,
  neverAnswers,
  START,
  settle,
  storesPlant,
  tokenAnswer,
} from "./fakes.ts";

const fern = (id: bigint) => ({ id, name: "Fern" });

describe("a create's own signal", () => {
  it("stops it at once while it waits for a token another call waits for too; the token fetch goes on for that one", async () => {
    const clock = new FakeClock({ now: START });
    const { client, tokenRequests, plantRequests } = clientOnFakes({
      clock,
      answerToken: answerAfter(clock, 1000, () => tokenAnswer("token-1")),
    });
    const controller = new AbortController();
    const other = client.createPlant(fern(1n));
    const aborted = failureOf(client.createPlant(fern(2n), { signal: controller.signal }));
    await letRun();
    const reason = new Error("the user left the page");
    controller.abort(reason);
    expect(await settle(clock, aborted)).toBe(reason);
    expect(clock.now()).toBe(START);

    expect(await settle(clock, other)).toEqual({ name: "Fern" });
    expect(tokenRequests()).toHaveLength(1);
    expect(plantRequests().map((request) => JSON.parse(request.body).id)).toEqual([1]);
  });
});

/** Where a call waits: for a token due in 1 s, for an answer that never comes, for a 503's Retry-After: 1. */
const WAITS = {
  "for a token": (clock: FakeClock) => ({ answerToken: answerAfter(clock, 1000, () => tokenAnswer("t")) }),
  "for its answer": () => ({ answerPlants: neverAnswers }),
  "to send it again": () => ({ answerPlants: failing(503, "unavailable", { "retry-after": "1" }) }),
};

describe("an abort, of a create's own signal or of the client's", () => {
  it.each([
    ["its own signal", "for a token", 0],
    ["its own signal", "for its answer", 1],
    ["its own signal", "to send it again", 1],
    ["the client's signal", "for a token", 0],
    ["the client's signal", "for its answer", 1],
    ["the client's signal", "to send it again", 1],
  ] as const)(
    "%s stops it at once while it waits %s, throwing the signal's reason, not a PlantStoreError",
    async (whose, where, posts) => {
      const clock = new FakeClock({ now: START });
      // A clock without sleep: the wait before another attempt is one of its timers, which only settle moves.
      const timersOnly = { now: () => clock.now(), setTimer: clock.setTimer.bind(clock) };
      const controller = new AbortController();
      const own = whose === "its own signal" ? controller.signal : undefined;
      const { client, plantRequests } = clientOnFakes({
        clock,
        ...WAITS[where](clock),
        options: { clock: timersOnly, signal: own ? undefined : controller.signal },
      });
      const call = failureOf(client.createPlant(fern(1n), { signal: own }));
      await letRun();
      // AbortController.abort() with no reason gives a DOMException named AbortError: thrown as it is.
      controller.abort();
      expect(await settle(clock, call)).toBe(controller.signal.reason);
      expect(clock.now()).toBe(START);
      expect(plantRequests()).toHaveLength(posts);
    },
  );
});

it("leaves no listener on a caller's signal or the client's once its calls are over, answered or refused", async () => {
  const clientSignal = new AbortController().signal;
  const callSignal = new AbortController().signal;
  const { create } = clientOnFakes({
    answerPlants: inTurn(storesPlant, failing(409), storesPlant),
    options: { signal: clientSignal },
  });
  for (const id of [1n, 2n, 3n]) await create(fern(id), { signal: callSignal }).catch(() => undefined);
  expect(getEventListeners(callSignal, "abort")).toEqual([]);
  expect(getEventListeners(clientSignal, "abort")).toEqual([]);
});
