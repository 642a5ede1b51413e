/**
 * Time as the client reads and waits for it, injectable so that tests move it instead of waiting. The
 * client's own: it ships nothing of the function's.
 */
export interface Clock {
  /** Milliseconds since the epoch, as Date.now(). */
  now(): number;
  /** Calls `callback` after `ms`; the returned function cancels it. */
  setTimer(callback: () => void, ms: number): () => void;
  /**
   * Resolves after `ms`, rejects with the signal's reason as soon as it aborts. Optional: without it, a
   * wait is one of the clock's timers (a test's clock may let waits pass at once while timers wait).
   */
  sleep?(ms: number, signal?: AbortSignal): Promise<void>;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  setTimer(callback, ms) {
    const timer = setTimeout(callback, ms);
    return () => clearTimeout(timer);
  },
};

/** Waits `ms` on `clock`: its own sleep when it has one, else one of its timers. @internal */
export function sleep(clock: Clock, ms: number, signal?: AbortSignal): Promise<void> {
  if (clock.sleep) return clock.sleep(ms, signal);
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    // No timer for no wait: an immediate retry is made at once.
    if (ms <= 0) return resolve();
    const onAbort = () => {
      cancel();
      reject(signal?.reason);
    };
    const cancel = clock.setTimer(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
