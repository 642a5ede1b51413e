import { describe, expect, it } from "vitest";
import { clockOfTimers } from "../../lambda/clock.ts";

describe("a clock of timers (the system clock's shape)", () => {
  it("sleeps on one of its timers, and stops sleeping when the signal aborts", async () => {
    const timers: { ms: number; fire: () => void; cancelled: boolean }[] = [];
    const clock = clockOfTimers({
      now: () => 0,
      setTimer(fire, ms) {
        const timer = { ms, fire, cancelled: false };
        timers.push(timer);
        return () => {
          timer.cancelled = true;
        };
      },
    });
    let slept = false;
    const sleeping = clock.sleep(250).then(() => {
      slept = true;
    });
    await Promise.resolve();
    expect(slept).toBe(false);
    timers[0]?.fire();
    await sleeping;
    expect(timers.map(({ ms }) => ms)).toEqual([250]);

    const controller = new AbortController();
    const aborted = clock.sleep(1000, controller.signal);
    controller.abort(new Error("shutting down"));
    await expect(aborted).rejects.toThrow("shutting down");
    expect(timers[1]?.cancelled).toBe(true);

    await clock.sleep(0);
    expect(timers).toHaveLength(2);
  });
});
