/**
 * Time as the function reads and waits for it, injected wherever it is read so that tests move it instead
 * of waiting (one fake: test/support/fake-clock.ts).
 */
export interface Clock {
  /** Milliseconds since the epoch, as Date.now(). */
  now(): number;
  /** Calls `callback` after `ms`; the returned function cancels it. */
  setTimer(callback: () => void, ms: number): () => void;
  /**
   * Resolves after `ms`; rejects with the signal's reason as soon as it aborts. A method of its own
   * (clockOfTimers builds it on setTimer) so that a fake clock can let waits pass at once while its
   * timers wait for a cue.
   */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

/**
 * A Clock from `now` and `setTimer` alone, its sleep one of its timers: for a clock whose waits are timers
 * like any other (the system's; a fake that moves time to its next timer, as the client's tests have).
 */
export function clockOfTimers({ now, setTimer }: Pick<Clock, "now" | "setTimer">): Clock {
  return {
    now,
    setTimer,
    sleep: (ms, signal) =>
      new Promise((resolve, reject) => {
        if (signal?.aborted) return reject(signal.reason);
        // No timer for no wait: an immediate retry is made at once.
        if (ms <= 0) return resolve();
        const onAbort = () => {
          cancel();
          reject(signal?.reason);
        };
        const cancel = setTimer(() => {
          signal?.removeEventListener("abort", onAbort);
          resolve();
        }, ms);
        signal?.addEventListener("abort", onAbort, { once: true });
      }),
  };
}

export const systemClock: Clock = clockOfTimers({
  now: () => Date.now(),
  setTimer(callback, ms) {
    const timer = setTimeout(callback, ms);
    return () => clearTimeout(timer);
  },
});

/**
 * A signal that aborts `ms` after, on `clock`, as AbortSignal.timeout's does (a DOMException named
 * TimeoutError), but cancellable once whatever it limited is over, and on a fake clock in tests.
 */
export function timeoutSignal(clock: Clock, ms: number): { signal: AbortSignal; cancel: () => void } {
  const controller = new AbortController();
  const cancel = clock.setTimer(
    () => controller.abort(new DOMException(`no answer within ${ms} ms`, "TimeoutError")),
    ms,
  );
  return { signal: controller.signal, cancel };
}
