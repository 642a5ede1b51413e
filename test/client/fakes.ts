/**
 * The client's tests on the one fake clock (test/support/fake-clock.ts) and a scripted fetch, so that its
 * waits, timeouts and retries take no real time.
 */
import { setImmediate } from "node:timers/promises";
import {
  createPlantStoreClient,
  type NewPlant,
  type PlantStoreClientOptions,
  type PlantStoreError,
} from "../../client/index.ts";
import { FakeClock } from "../support/fake-clock.ts";

/** When the client's fake clocks start: a time of today's order (HTTP dates, token lifetimes), whole seconds. */
export const START = 1_800_000_000_000;

/**
 * Settles `promise`, moving `clock` to its next timer (an answer due later, an attempt's timeout, the
 * call's deadline) whenever nothing else is left to run.
 */
export async function settle<T>(clock: FakeClock, promise: Promise<T>): Promise<T> {
  let settled = false;
  const done = () => {
    settled = true;
  };
  promise.then(done, done);
  for (;;) {
    await letRun();
    if (settled) return promise;
    if (!clock.next()) throw new Error("the call waits for something that never comes");
  }
}

/** Lets what is running run (microtasks, a few turns of the event loop), without moving the fake clock. */
export async function letRun() {
  // Every microtask (the scripted fetch's answers, the client's awaits) runs before these resolve; a few
  // turns of the event loop leave room for anything a Response body takes beyond microtasks.
  for (let turn = 0; turn < 3; turn++) await setImmediate();
}

/** What a call throws, for the test to look into; an Error saying so when it does not fail. */
export function failureOf(call: Promise<unknown>): Promise<PlantStoreError> {
  const notFailed = () => new Error("the call did not fail") as PlantStoreError;
  return call.then(notFailed, (thrown: unknown) => thrown as PlantStoreError);
}

interface RecordedRequest {
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

/**
 * A client on a fake clock (a new one at START unless given) whose token endpoint answers `answerToken`
 * (token-1, token-2, … unless given) and whose API answers `answerPlants` (the plant it was sent, unless
 * given); `options` are laid over the fakes' (credentials, clock, no jitter, …). Its fetch records every
 * request, token requests and API requests apart; `create` makes a call and settles it on the clock,
 * `failure` gives what that call throws.
 */
export function clientOnFakes({
  answerPlants = storesPlant,
  answerToken = numberedTokens(),
  options = {},
  clock = new FakeClock({ now: START }),
}: {
  answerPlants?: Responder;
  answerToken?: Responder;
  options?: Partial<PlantStoreClientOptions>;
  clock?: FakeClock;
} = {}) {
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
    const signal = init.signal ?? undefined;
    return url === TOKEN_URL ? answerToken(request, signal) : answerPlants(request, signal);
  };
  // No jitter: the backoff, random() × its ceiling, is 0, so a wait is a Retry-After's or none.
  const client = createPlantStoreClient({
    baseUrl: BASE_URL,
    credentials: CREDENTIALS,
    fetch,
    clock,
    random: () => 0,
    ...options,
  });
  const create = (plant: NewPlant = { id: 1n, name: "Fern" }, callOptions?: { signal?: AbortSignal }) =>
    settle(clock, client.createPlant(plant, callOptions));
  return {
    clock,
    client,
    create,
    failure: (plant?: NewPlant) => failureOf(create(plant)),
    requests,
    tokenRequests: () => requests.filter((request) => request.url === TOKEN_URL),
    plantRequests: () => requests.filter((request) => request.url === PLANTS_URL),
  };
}

/** Answers in this order, the last one repeated. */
export function inTurn(...answers: Responder[]): Responder {
  let next = 0;
  return (request, signal) => (answers[Math.min(next++, answers.length - 1)] as Responder)(request, signal);
}

/** An answer after `ms` of the fake clock, or the abort of the request's signal, whichever comes first. */
export function answerAfter(clock: FakeClock, ms: number, answer: () => Response): Responder {
  return (_request, signal) =>
    new Promise((resolve, reject) => {
      const cancel = clock.setTimer(() => resolve(answer()), ms);
      signal?.addEventListener(
        "abort",
        () => {
          cancel();
          reject(signal.reason);
        },
        { once: true },
      );
    });
}

/** No answer ever: the request fails only when its signal aborts (a timeout, or the caller). */
export const neverAnswers: Responder = (_request, signal) =>
  new Promise((_resolve, reject) => {
    signal?.addEventListener("abort", () => reject(signal.reason), { once: true });
  });

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

/** The API's failure: `{ error: <status>, message }`, with these headers. */
export function failing(status: number, message = `said ${status}`, headers: Record<string, string> = {}) {
  return () => json(status, { error: status, message }, headers);
}

/** The API storing the plant it was sent: its name and tag answered. */
export const storesPlant: Responder = (request) => {
  const { name, tag } = JSON.parse(request.body) as { name: string; tag?: string };
  return json(200, tag === undefined ? { name } : { name, tag });
};

export function tokenAnswer(token: string, expiresIn = 3600): Response {
  return json(200, { access_token: token, expires_in: expiresIn, token_type: "Bearer" });
}

/** A token endpoint that gives token-1, token-2, … one a request. */
function numberedTokens(): Responder {
  let issued = 0;
  return () => tokenAnswer(`token-${++issued}`);
}
