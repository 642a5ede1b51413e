import { AsyncLocalStorage } from "node:async_hooks";

/** The time one request spent waiting on each dependency, in ms: its log line's `storeMs` and `issuerMs`. */
export interface CallTimings {
  storeMs: number;
  issuerMs: number;
}

const current = new AsyncLocalStorage<CallTimings>();

/** Runs one request with timings of its own, which `timed` adds to while it runs. */
export function withCallTimings<T>(run: (timings: CallTimings) => Promise<T>): Promise<T> {
  const timings: CallTimings = { storeMs: 0, issuerMs: 0 };
  return current.run(timings, () => run(timings));
}

/** Adds the time `call` takes to the running request's `kind`; outside a request (a background refresh), nothing. */
export async function timed<T>(kind: keyof CallTimings, call: () => Promise<T>): Promise<T> {
  const timings = current.getStore();
  if (timings === undefined) return call();
  const startedAt = performance.now();
  try {
    return await call();
  } finally {
    timings[kind] += performance.now() - startedAt;
  }
}
