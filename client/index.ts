/**
 * A client for the Plant Store API (POST /plants) that keeps every int64 id exact, gets and caches its
 * own client-credentials tokens, and retries what is safe to retry. No dependency and no Node-only
 * import: it runs on Node 20+ and in browsers, with the global fetch.
 *
 *   const client = createPlantStoreClient({ baseUrl, credentials: { clientId, clientSecret, tokenUrl } });
 *   const plant = await client.createPlant({ id: 9223372036854775807n, name: "Fern", tag: "fern" });
 *
 * Which fields a plant has comes from openapi/openapi.yaml (client/generated/, `npm run generate`).
 */
import { type Clock, clockOfTimers, systemClock } from "../lambda/clock.ts";
import { RetryQuota } from "../lambda/retry/standard-retry.ts";
import { credentialForms, maskedExcerpt, PlantStoreError } from "./errors.ts";
import {
  type Exchange,
  exchange,
  type FetchFunction,
  maskedRequestId,
  retryAfterMs,
  secondsOf,
} from "./http-exchange.ts";
import {
  type ExactNewPlant,
  jsonFields,
  type NewPlant,
  newPlantJson,
  type Plant,
  plantFrom,
} from "./plant-json.ts";
import {
  RETRYABLE_STATUSES,
  RetryableFailure,
  type RetryOptions,
  requestWithRetries,
  retryPolicyFrom,
} from "./retry.ts";
import { type Credentials, type TokenContext, type TokenSource, tokenSourceFor } from "./tokens.ts";

export { type Clock, systemClock } from "../lambda/clock.ts";
export { PlantStoreError, type PlantStoreErrorDetails, TokenEndpointError } from "./errors.ts";
export { type FetchFunction, MAX_ANSWER_BYTES } from "./http-exchange.ts";
export { INT64_MAX, INT64_MIN, type PlantIdInput, plantIdFrom } from "./int64-id.ts";
export type { ExactNewPlant, NewPlant, Plant } from "./plant-json.ts";
export { DEFAULT_RETRY_POLICY, RETRYABLE_STATUSES, type RetryOptions } from "./retry.ts";
export type { BearerToken, ClientCredentials, Credentials } from "./tokens.ts";

export interface PlantStoreClientOptions {
  /**
   * The specification's {base_url}: the local run's http://127.0.0.1:3000, or the stack's ApiUrl output
   * (which already ends in /plants). Plants are posted to `<baseUrl>/plants`, or to baseUrl itself when
   * its path ends in /plants; a trailing slash makes no difference.
   */
  baseUrl: string;
  credentials: Credentials;
  /** The global fetch by default. */
  fetch?: FetchFunction;
  retry?: RetryOptions;
  /** Aborting it stops every call of this client at once, with the signal's reason; nothing is retried. */
  signal?: AbortSignal;
  /**
   * For tests: the clock the client reads, waits and times out with (systemClock by default), and the
   * jitter's random source. A clock of `now` and `setTimer` alone will do: its waits are then its timers.
   */
  clock?: Clock | Pick<Clock, "now" | "setTimer">;
  random?: () => number;
}

export interface PlantStoreClient {
  /**
   * Creates the plant, or finds it already stored identically (a replay answers the same 200), so a call
   * whose outcome is unknown may always be made again. Throws a TypeError before sending an id that is
   * not an exact int64 or a property the contract does not have, and a PlantStoreError
   * (TokenEndpointError for the token) when the call fails. At most `retry.maxAttempts` POSTs are sent,
   * the one sent again with a new token after a refused one among them, all within `retry.deadlineMs`.
   */
  createPlant<P extends NewPlant>(plant: ExactNewPlant<P>): Promise<Plant>;
  /** Where plants are posted. */
  readonly plantsUrl: string;
}

export function createPlantStoreClient(options: PlantStoreClientOptions): PlantStoreClient {
  const plantsUrl = plantsUrlFrom(options.baseUrl);
  const context = clientContextFrom(options);
  const tokens = tokenSourceFor(options.credentials, context);
  const endpoint: PlantsEndpoint = {
    url: plantsUrl,
    what: `POST ${plantsUrl}`,
    fetch: context.fetch,
    clock: context.clock,
    tokens,
  };

  return {
    plantsUrl,
    async createPlant(plant) {
      const body = newPlantJson(plant); // a TypeError here, before any token or request
      const deadlineAt = context.clock.now() + context.policy.deadlineMs;
      let token = await tokens.token(deadlineAt);
      let tokenReplaced = false;
      return requestWithRetries({ ...context, what: endpoint.what, deadlineAt }, async (signal) => {
        const result = await postPlant(endpoint, body, token, signal);
        if (!(result instanceof InvalidTokenAnswer)) return result;
        // The API refused the token itself (revoked, rotated): one new token, once, never a loop.
        if (tokenReplaced || !tokens.replace(token)) throw result.answer;
        tokenReplaced = true;
        throw new RetryableFailure(result.answer, undefined, async () => {
          token = await tokens.token(deadlineAt);
        });
      });
    },
  };
}

/** The options, with the global fetch, the system clock, Math.random and the default retries for those not given. */
function clientContextFrom(options: PlantStoreClientOptions): TokenContext {
  return {
    fetch: options.fetch ?? ((input: string, init: RequestInit) => globalThis.fetch(input, init)),
    clock: clockFrom(options.clock),
    random: options.random ?? Math.random,
    policy: retryPolicyFrom(options.retry),
    quota: new RetryQuota(),
    signal: options.signal,
  };
}

/** The clock given, made whole: one of `now` and `setTimer` alone waits with its timers. */
function clockFrom(given: PlantStoreClientOptions["clock"]): Clock {
  if (given === undefined) return systemClock;
  if ("sleep" in given) return given;
  return clockOfTimers({ now: () => given.now(), setTimer: (callback, ms) => given.setTimer(callback, ms) });
}

/** Where one client posts its plants, and what its messages must never show. */
interface PlantsEndpoint {
  url: string;
  /** The call as messages name it, e.g. "POST http://127.0.0.1:3000/plants". */
  what: string;
  fetch: FetchFunction;
  clock: Clock;
  tokens: TokenSource;
}

/**
 * One POST of the plant and what its answer means: the stored Plant, InvalidTokenAnswer when the token
 * itself was refused, or a thrown failure (a RetryableFailure when worth another attempt).
 */
async function postPlant(
  endpoint: PlantsEndpoint,
  body: string,
  token: string,
  signal: AbortSignal,
): Promise<Plant | InvalidTokenAnswer> {
  const init = {
    method: "POST",
    headers: {
      authorization: `Bearer ${token}`,
      "content-type": "application/json",
      accept: "application/json",
    },
    body,
    signal,
  };
  const answer = await exchange(endpoint.fetch, endpoint.url, init, endpoint.what);
  if (answer instanceof PlantStoreError) throw new RetryableFailure(answer);
  if (answer.status === 200) return storedPlantOf(answer, endpoint.what, endpoint.tokens.secrets);
  const waitMs = retryAfterMs(answer.headers, endpoint.clock);
  const failure = refusalOf(answer, waitMs, endpoint.what, [
    ...credentialForms(token),
    ...endpoint.tokens.secrets,
  ]);
  if (answer.status === 401 && isInvalidToken(answer.headers)) return new InvalidTokenAnswer(failure);
  if (!RETRYABLE_STATUSES.has(answer.status)) throw failure;
  throw new RetryableFailure(failure, waitMs);
}

/** The Plant a 200 answers; a body that is not one is the server's fault, thrown. */
function storedPlantOf(answer: Exchange, what: string, secrets: readonly string[]): Plant {
  const plant = plantFrom(answer.body);
  if (plant) return plant;
  throw new PlantStoreError(`${what} answered 200 with a body that is not a Plant`, {
    status: 200,
    requestId: maskedRequestId(answer.headers, secrets),
  });
}

/** The failure an answer other than 200 is: its status, the server's message (secrets masked), its Retry-After. */
function refusalOf(
  answer: Exchange,
  waitMs: number | undefined,
  what: string,
  secrets: readonly string[],
): PlantStoreError {
  const fields = jsonFields(answer.body);
  const serverMessage = maskedExcerpt(
    typeof fields.message === "string" ? fields.message : answer.body,
    secrets,
  );
  return new PlantStoreError(`${what} answered ${answer.status}: ${serverMessage || "(no message)"}`, {
    status: answer.status,
    error: typeof fields.error === "number" ? fields.error : undefined,
    retryAfterSeconds: secondsOf(waitMs),
    requestId: maskedRequestId(answer.headers, secrets),
  });
}

/** A 401 whose challenge says the token itself was refused (RFC 6750 `error="invalid_token"`). */
class InvalidTokenAnswer {
  constructor(readonly answer: PlantStoreError) {}
}

function isInvalidToken(headers: Headers): boolean {
  return /\berror\s*=\s*"?invalid_token"?/i.test(headers.get("www-authenticate") ?? "");
}

function plantsUrlFrom(baseUrl: string): string {
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    throw new TypeError(
      `baseUrl must be an absolute URL such as https://api.example.com, got ${JSON.stringify(baseUrl)}`,
    );
  }
  if (url.search || url.hash) throw new TypeError(`baseUrl must have no query or fragment, got ${baseUrl}`);
  const path = url.pathname.replace(/\/+$/, "");
  // The stack's ApiUrl output already ends in /plants; the specification's {base_url} does not.
  url.pathname = path.endsWith("/plants") ? path : `${path}/plants`;
  return url.toString();
}
