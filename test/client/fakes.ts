/** A virtual clock and a scripted fetch, so that the client's waits, timeouts and retries take no real time. */
import { type Clock, systemClock } from "../../client/index.ts";

interface Timer {
  at: number;
  callback: () => void;
}

export class FakeClock implements Clock {
  time = 1_800_000_000_000;
  readonly started = this.time;
  private timers: Timer[] = [];

  now(): number {
    return this.time;
  }

  setTimer(callback: () => void, ms: number): () => void {
    const timer = { at: this.time + ms, callback };
    this.timers.push(timer);
    return () => {
      this.timers = this.timers.filter((other) => other !== timer);
    };
  }

  get elapsedMs(): number {
    return this.time - this.started;
  }

  /** Settles `promise`, moving time to the next timer whenever nothing else is left to run. */
  async run<T>(promise: Promise<T>): Promise<T> {
    let settled = false;
    promise.then(
      () => {
        settled = true;
      },
      () => {
        settled = true;
      },
    );
    for (;;) {
      // Every microtask (the scripted fetch's answers, the client's awaits) runs before these resolve; a few
      // turns of the event loop leave room for anything a Response body takes beyond microtasks.
      for (let turn = 0; turn < 3; turn++) await new Promise((resolve) => setImmediate(resolve));
      if (settled) return promise;
      const next = this.timers.reduce<Timer | undefined>(
        (earliest, timer) => (earliest === undefined || timer.at < earliest.at ? timer : earliest),
        undefined,
      );
      if (next === undefined) throw new Error("the call waits for something that never comes");
      this.timers = this.timers.filter((timer) => timer !== next);
      this.time = Math.max(this.time, next.at);
      next.callback();
    }
  }
}

/**
 * Real time, except for the client's waits between attempts: a timer of at most `longestWaitMs` (a
 * backoff, a capped Retry-After) is recorded in `waits` and fires at once, and the clock moves on by its
 * length, as if it had been waited. Longer timers (the attempt timeouts, which the tests using this set
 * far longer) run in real time. For the end-to-end tests, where a real server answers.
 */
export class SkippedWaitsClock implements Clock {
  readonly waits: number[] = [];
  private skippedMs = 0;

  constructor(private readonly longestWaitMs: number) {}

  now(): number {
    return Date.now() + this.skippedMs;
  }

  setTimer(callback: () => void, ms: number): () => void {
    if (ms > this.longestWaitMs) return systemClock.setTimer(callback, ms);
    this.waits.push(ms);
    this.skippedMs += ms;
    let cancelled = false;
    queueMicrotask(() => {
      if (!cancelled) callback();
    });
    return () => {
      cancelled = true;
    };
  }
}

/**
 * Real time, whose pending timers a test can fire before they are due: an attempt's timeout passing
 * on cue, at the moment the test chooses, instead of after a real wait.
 */
export class CuedTimeoutsClock implements Clock {
  private pending = new Set<() => void>();

  now(): number {
    return Date.now();
  }

  setTimer(callback: () => void, ms: number): () => void {
    const fire = () => {
      if (this.pending.delete(fire)) callback();
    };
    this.pending.add(fire);
    const cancel = systemClock.setTimer(fire, ms);
    return () => {
      this.pending.delete(fire);
      cancel();
    };
  }

  /** Fires every timer now pending; how many there were. */
  fireAll(): number {
    const due = [...this.pending];
    for (const fire of due) fire();
    return due.length;
  }
}

export interface RecordedRequest {
  url: string;
  method: string;
  headers: Headers;
  body: string;
  /** Virtual time when it was sent. */
  at: number;
}

export type Responder = (
  request: RecordedRequest,
  signal: AbortSignal | undefined,
) => Response | Promise<Response>;

/** A fetch that answers from `respond` and records every request, token requests and API requests apart. */
export function scriptedFetch(clock: FakeClock, respond: Responder) {
  const requests: RecordedRequest[] = [];
  const fetch = async (url: string, init: RequestInit): Promise<Response> => {
    init.signal?.throwIfAborted();
    const request = {
      url,
      method: init.method ?? "GET",
      headers: new Headers(init.headers),
      body: typeof init.body === "string" ? init.body : "",
      at: clock.now(),
    };
    requests.push(request);
    return respond(request, init.signal ?? undefined);
  };
  return {
    fetch,
    requests,
    tokenRequests: () => requests.filter((request) => request.url === TOKEN_URL),
    plantRequests: () => requests.filter((request) => request.url === PLANTS_URL),
  };
}

export const BASE_URL = "https://plants.example.test";
export const PLANTS_URL = `${BASE_URL}/plants`;
export const TOKEN_URL = "https://auth.example.test/oauth2/token";
export const CREDENTIALS = {
  clientId: "client-id-1",
  clientSecret: "SecretCanary-0123456789abcdef",
  tokenUrl: TOKEN_URL,
};

export function json(status: number, body: unknown, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { "content-type": "application/json", ...headers },
  });
}

export function tokenAnswer(token: string, expiresIn = 3600): Response {
  return json(200, { access_token: token, expires_in: expiresIn, token_type: "Bearer" });
}

/** A fetch that never answers: it rejects only when its signal aborts (a timeout, or the caller). */
export function neverAnswers(signal: AbortSignal | undefined): Promise<Response> {
  return new Promise((_resolve, reject) => {
    signal?.addEventListener("abort", () => reject(signal.reason), { once: true });
  });
}

export const INVALID_TOKEN_CHALLENGE = {
  "www-authenticate":
    'Bearer realm="plants", error="invalid_token", error_description="the token has expired"',
};
