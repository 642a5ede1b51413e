import type { Clock } from "../../lambda/clock.ts";

interface Timer {
  at: number;
  ms: number;
  fire: () => void;
}

/**
 * The one fake Clock (lambda/clock.ts): time moves only when a test says so or code sleeps, and a timer
 * fires only when time reaches it, so no test waits for one, however loaded the machine.
 * - `sleep` passes at once, recorded in `sleeps`; it moves time by its length unless `{ still: true }`
 *   (then a deadline never comes, however many requests wait at once);
 * - `advance(ms)` moves time and fires the timers it reaches; `next()` moves time to the earliest timer
 *   and fires it: a test's cue that an attempt has timed out.
 */
export class FakeClock implements Clock {
  readonly sleeps: number[] = [];
  #now: number;
  #timers: Timer[] = [];
  readonly #still: boolean;

  constructor({ now = 0, still = false }: { now?: number; still?: boolean } = {}) {
    this.#now = now;
    this.#still = still;
  }

  now(): number {
    return this.#now;
  }

  setTimer(callback: () => void, ms: number): () => void {
    const timer = { at: this.#now + ms, ms, fire: callback };
    this.#timers.push(timer);
    return () => {
      this.#timers = this.#timers.filter((other) => other !== timer);
    };
  }

  async sleep(ms: number, signal?: AbortSignal): Promise<void> {
    signal?.throwIfAborted();
    this.sleeps.push(ms);
    if (!this.#still) this.advance(ms);
  }

  /** The durations of the timers set and not yet fired or cancelled, in the order they were set. */
  pendingTimers(): number[] {
    return this.#timers.map(({ ms }) => ms);
  }

  advance(ms: number): void {
    this.#now += ms;
    for (;;) {
      const due = this.#earliest();
      if (due === undefined || due.at > this.#now) return;
      this.#fire(due);
    }
  }

  /** Moves time to the earliest timer, if it is later, and fires it; false when there is none. */
  next(): boolean {
    const due = this.#earliest();
    if (due === undefined) return false;
    this.#now = Math.max(this.#now, due.at);
    this.#fire(due);
    return true;
  }

  #earliest(): Timer | undefined {
    return this.#timers.reduce<Timer | undefined>(
      (earliest, timer) => (earliest === undefined || timer.at < earliest.at ? timer : earliest),
      undefined,
    );
  }

  #fire(timer: Timer): void {
    this.#timers = this.#timers.filter((other) => other !== timer);
    timer.fire();
  }
}
