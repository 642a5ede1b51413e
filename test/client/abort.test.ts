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

const abortListeners = (signal: AbortSignal) => getEventListeners(signal, "abort").length;

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
    const { clock, client, plantRequests } = setup((_request, signal) => neverAnswers(signal));
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

  it("stops it at once while it waits to retry, and sends nothing more", async () => {
    const fake = new FakeClock({ now: START });
    // A clock without sleep: the client waits with its timers, which only the test moves.
    const timersOnly = { now: () => fake.now(), setTimer: fake.setTimer.bind(fake) };
    const { client, plantRequests } = setup(
      () => json(503, { error: 503, message: "unavailable" }, { "retry-after": "1" }),
      undefined,
      { clock: timersOnly },
      fake,
    );
    const controller = new AbortController();
    const call = client.createPlant(fern(1n), { signal: controller.signal }).catch((thrown) => thrown);
    await letRun();
    // The first POST was answered; the wait of its Retry-After is the one timer left.
    expect(plantRequests()).toHaveLength(1);
    expect(fake.pendingTimers()).toEqual([1000]);
    controller.abort(new Error("enough"));
    expect(await settle(fake, call)).toMatchObject({ message: "enough" });
    expect(fake.now()).toBe(START);
    expect(fake.pendingTimers()).toEqual([]);
    expect(plantRequests()).toHaveLength(1);
  });

  it("already aborted: nothing is asked or sent", async () => {
    const { clock, client, requests } = setup(stored);
    const reason = new Error("cancelled before it began");
    await expect(
      settle(clock, client.createPlant(fern(1n), { signal: AbortSignal.abort(reason) })),
    ).rejects.toBe(reason);
    expect(requests).toHaveLength(0);
  });

  it("leaves the client as it was: its token kept, its next calls made", async () => {
    const { clock, client, tokenRequests, plantRequests } = setup((request, signal) =>
      JSON.parse(request.body).id === 1 ? neverAnswers(signal) : stored(request, signal),
    );
    const controller = new AbortController();
    const call = client.createPlant(fern(1n), { signal: controller.signal }).catch((thrown) => thrown);
    await letRun();
    controller.abort();
    expect(await settle(clock, call)).toBe(controller.signal.reason);
    expect(await settle(clock, client.createPlant(fern(2n)))).toEqual({ name: "Fern" });
    expect(
      await settle(clock, client.createPlant(fern(3n), { signal: controller.signal })).catch((e) => e),
    ).toBe(controller.signal.reason);
    expect(tokenRequests()).toHaveLength(1);
    expect(plantRequests()).toHaveLength(2);
  });

  it("keeps no listener on the caller's signal once the call is over, however it ended", async () => {
    let answered = 0;
    const { clock, client } = setup((request, signal) => {
      answered++;
      if (answered === 1) return stored(request, signal);
      if (answered === 2) return json(409, { error: 409, message: "another plant has id 2" });
      return neverAnswers(signal);
    });
    const shared = new AbortController();
    await settle(clock, client.createPlant(fern(1n), { signal: shared.signal }));
    await settle(clock, client.createPlant(fern(2n), { signal: shared.signal })).catch(() => undefined);
    expect(abortListeners(shared.signal)).toBe(0);

    const ownController = new AbortController();
    const inFlight = client.createPlant(fern(3n), { signal: ownController.signal }).catch((thrown) => thrown);
    await letRun();
    expect(abortListeners(ownController.signal)).toBe(1);
    ownController.abort();
    expect(await settle(clock, inFlight)).toBe(ownController.signal.reason);
    expect(abortListeners(ownController.signal)).toBe(0);
  });
});

describe("one caller's signal shared by many calls", () => {
  it("is followed through one listener while they run, none after, and no listener-leak warning", async () => {
    const warnings: string[] = [];
    const onWarning = (warning: Error) => warnings.push(warning.name);
    process.on("warning", onWarning);
    const shared = new AbortController();
    try {
      const { clock, client } = setup((_request, signal) => neverAnswers(signal));
      const calls = Array.from({ length: 20 }, (_, index) =>
        client.createPlant(fern(BigInt(index + 1)), { signal: shared.signal }).catch((thrown) => thrown),
      );
      await letRun();
      expect(abortListeners(shared.signal)).toBe(1);
      shared.abort();
      const outcomes = await settle(clock, Promise.all(calls));
      expect(outcomes.every((outcome) => outcome === shared.signal.reason)).toBe(true);
      await new Promise((resolve) => setImmediate(resolve)); // a warning is emitted on the next tick
    } finally {
      process.off("warning", onWarning);
    }
    expect(warnings).toEqual([]);
    expect(abortListeners(shared.signal)).toBe(0);
  });
});

describe("the client's signal", () => {
  it("stops every call, each with its own signal or none, through the client's one listener", async () => {
    const clientController = new AbortController();
    const { clock, client } = setup((_request, signal) => neverAnswers(signal), undefined, {
      signal: clientController.signal,
    });
    const ownControllers = [new AbortController(), new AbortController()];
    const calls = [
      client.createPlant(fern(1n)),
      ...ownControllers.map((own, index) =>
        client.createPlant(fern(BigInt(index + 2)), { signal: own.signal }),
      ),
    ].map((call) => call.catch((thrown) => thrown));
    await letRun();
    expect(abortListeners(clientController.signal)).toBe(1);
    const reason = new Error("shutting down");
    clientController.abort(reason);
    expect(await settle(clock, Promise.all(calls))).toEqual([reason, reason, reason]);
    expect(clock.now()).toBe(START);
    for (const own of ownControllers) expect(abortListeners(own.signal)).toBe(0);
  });
});
