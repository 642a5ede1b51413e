/**
 * A client for the Plant Store API (POST /plants) that keeps every int64 id exact, gets and keeps its
 * own client-credentials tokens, and retries what is safe to retry. No dependency and no Node-only
 * import: it runs on Node 20+ and in browsers, with the global fetch.
 *
 *   const client = createPlantStoreClient({ baseUrl, credentials: { clientId, clientSecret, tokenUrl } });
 *   const plant = await client.createPlant({ id: 9223372036854775807n, name: "Fern", tag: "fern" });
 *
 * Which fields a plant has comes from openapi/openapi.yaml (client/generated/, `npm run generate`).
 */
import { type Clock, systemClock } from "./clock.ts";
import { PlantStoreError, TokenEndpointError } from "./errors.ts";
import {
  type Endpoint,
  type Exchange,
  exchange,
  type FetchFunction,
  httpUrlOf,
  kindOfStatus,
  maskedRequestId,
  NoAnswer,
  retryAfterMs,
  secondsOf,
  unlessAborted,
} from "./http-exchange.ts";
import type { SecretMask } from "./masking.ts";
import {
  type ExactNewPlant,
  jsonFields,
  type NewPlant,
  newPlantJson,
  type Plant,
  plantFrom,
} from "./plant-json.ts";
import {
  callSignalOf,
  RETRYABLE_STATUSES,
  RefusedToken,
  RetryableFailure,
  type RetryOptions,
  RetryQuota,
  requestWithRetries,
  retryPolicyFrom,
} from "./retry.ts";
import { type Credentials, type TokenContext, tokenSourceFor } from "./tokens.ts";

export { type Clock, systemClock } from "./clock.ts";
export {
  PlantStoreError,
  type PlantStoreErrorDetails,
  type PlantStoreErrorKind,
  TokenEndpointError,
} from "./errors.ts";
export { type FetchFunction, MAX_ANSWER_BYTES } from "./http-exchange.ts";
export { INT64_MAX, INT64_MIN, type PlantIdInput, plantIdFrom } from "./int64-id.ts";
export type { ExactNewPlant, NewPlant, Plant } from "./plant-json.ts";
export { DEFAULT_RETRY_POLICY, RETRYABLE_STATUSES, type RetryOptions } from "./retry.ts";
export type { BearerToken, ClientCredentials, Credentials, TokenFunctionResult } from "./tokens.ts";

export interface PlantStoreClientOptions {
  /**
   * The specification's {base_url}: the local run's http://127.0.0.1:3000, or the stack's ApiUrl output
   * (which already ends in /plants). Plants are posted to `<baseUrl>/plants`, or to baseUrl itself when
   * its path ends in /plants; a trailing slash makes no difference. A redirect is never followed.
   */
  baseUrl: string;
  credentials: Credentials;
  /** The global fetch by default. */
  fetch?: FetchFunction | undefined;
  retry?: RetryOptions | undefined;
  /** Aborting it stops every call of this client at once, with the signal's reason; nothing is retried. */
  signal?: AbortSignal | undefined;
  /**
   * For tests: the clock the client reads, waits and times out with (systemClock by default), and the
   * jitter's random source. A clock without `sleep` waits with its timers.
   */
  clock?: Clock | undefined;
  random?: (() => number) | undefined;
}

/** Every option's name, for the refusal of any other; the type keeps the list whole. */
const OPTION_NAMES = Object.keys({
  baseUrl: 0,
  credentials: 0,
  fetch: 0,
  retry: 0,
  signal: 0,
  clock: 0,
  random: 0,
} satisfies Record<keyof PlantStoreClientOptions, 0>);

export interface PlantStoreClient {
  /**
   * Creates the plant, or finds it already stored identically (a replay answers the same 200), so a call
   * whose outcome is unknown may always be made again. Throws a TypeError before sending an id that is
   * not an exact int64 or a property the contract does not have, and a PlantStoreError
   * (TokenEndpointError for the token) when the call fails. At most `retry.maxAttempts` POSTs are sent,
   * the one sent again with a new token after a refused one among them, all within `retry.deadlineMs`.
   * Aborting `options.signal` stops this call alone at once (its wait for a token, its request or its
   * wait before the next), throwing the signal's reason; a plant whose POST went out may be stored.
   */
  createPlant<P extends NewPlant>(
    plant: ExactNewPlant<P>,
    options?: { signal?: AbortSignal | undefined },
  ): Promise<Plant>;
  /** Where plants are posted. */
  readonly plantsUrl: string;
}

export function createPlantStoreClient(options: PlantStoreClientOptions): PlantStoreClient {
  // A misspelt name (retries, maxAttempts out of retry) would be dropped, its setting silently the default.
  const unknownOption = Object.keys(options).find((key) => !OPTION_NAMES.includes(key));
  if (unknownOption !== undefined) {
    throw new TypeError(
      `unknown option '${unknownOption.slice(0, 64)}': createPlantStoreClient takes only ${OPTION_NAMES.join(", ")}`,
    );
  }
  for (const name of ["fetch", "random"] as const) {
    if (options[name] !== undefined && typeof options[name] !== "function") {
      throw new TypeError(`${name} must be a function, got ${typeof options[name]}`);
    }
  }
  const plantsUrl = plantsUrlFrom(options.baseUrl);
  const context = clientContextFrom(options);
  const tokens = tokenSourceFor(options.credentials, context);
  const endpoint: Endpoint = {
    url: plantsUrl,
    what: `POST ${plantsUrl}`,
    option: "baseUrl",
    fetch: context.fetch,
  };

  return {
    plantsUrl,
    async createPlant(plant, callOptions = {}) {
      const body = newPlantJson(plant); // a TypeError here, before any token or request
      const call = callSignalOf(context, callSignalFrom(callOptions));
      let outcomeUnknown = false;
      const unanswered = () => {
        outcomeUnknown = true;
      };
      try {
        call.signal.throwIfAborted();
        const deadlineAt = context.clock.now() + context.policy.deadlineMs;
        // A token fetch is shared by the calls waiting for it: this one stops waiting, the fetch goes on.
        const tokenFor = () => unlessAborted(tokens.token(deadlineAt), call.signal);
        let token = await tokenFor();
        let tokenReplaced = false;
        const retryContext = { ...context, signal: call.signal, what: endpoint.what, deadlineAt };
        return await requestWithRetries(retryContext, async (signal) => {
          const answer = await postPlant(
            endpoint,
            body,
            token,
            tokens.mask,
            context.clock,
            signal,
            unanswered,
          );
          if (answer instanceof PlantStoreError) throw answer;
          if (!(answer instanceof InvalidTokenAnswer)) return answer;
          // The API refused the token itself (revoked, rotated): one new token, once, never a loop.
          if (tokenReplaced || !tokens.replace(token)) throw answer.failure;
          tokenReplaced = true;
          throw new RefusedToken(answer.failure, async () => {
            token = await tokenFor();
          });
        });
      } catch (error) {
        // An abort is thrown with its reason as it is.
        throw outcomeUnknown && !call.signal.aborted ? withUnknownOutcome(error) : error;
      } finally {
        call.release();
      }
    },
  };
}

/**
 * A create's failure after a POST of it may have reached the API without an answer telling its outcome:
 * its message says that the plant may be stored and that resending is safe. Only the API's refusal of
 * the request as it is (400, 409) says it was not; any other failure after that POST, even the token
 * endpoint's, leaves the outcome unknown.
 */
function withUnknownOutcome(error: unknown): unknown {
  if (!(error instanceof PlantStoreError)) return error;
  const isToken = error instanceof TokenEndpointError;
  if (!isToken && (error.kind === "conflict" || error.kind === "invalid-request")) return error;
  // A new error rather than a longer message: a stack read before now holds the message it was made with.
  const { kind, status, serverMessage, retryAfterSeconds, requestId, attempts } = error;
  const details = { kind, status, serverMessage, retryAfterSeconds, requestId, attempts };
  const message = `${error.message}; the plant may have been stored: sending the same create again is safe (200 if it was)`;
  return isToken
    ? new TokenEndpointError(message, error.tokenUrl, error.oauthError, details)
    : new PlantStoreError(message, details);
}

/** createPlant's own options checked, as the client's are: its signal, if any. */
function callSignalFrom(callOptions: unknown): AbortSignal | undefined {
  if (typeof callOptions !== "object" || callOptions === null) {
    throw new TypeError("createPlant's options must be an object such as { signal }");
  }
  const unknownName = Object.keys(callOptions).find((key) => key !== "signal");
  if (unknownName !== undefined) {
    throw new TypeError(`unknown option '${unknownName.slice(0, 64)}': createPlant takes only signal`);
  }
  const { signal } = callOptions as { signal?: unknown };
  if (signal !== undefined && !(signal instanceof AbortSignal)) {
    throw new TypeError("createPlant's signal must be an AbortSignal");
  }
  return signal;
}

/** The options, with the global fetch, the system clock, Math.random and the default retries for those not given. */
function clientContextFrom(options: PlantStoreClientOptions): TokenContext {
  return {
    fetch: options.fetch ?? ((input: string, init: RequestInit) => globalThis.fetch(input, init)),
    clock: options.clock ?? systemClock,
    random: options.random ?? Math.random,
    policy: retryPolicyFrom(options.retry),
    quota: new RetryQuota(),
    signal: options.signal,
  };
}

/** A gateway's answers that say the API gave it none in time: the POST may have been stored. */
const GATEWAY_FAILURES = [502, 504];

/**
 * One POST of the plant and what its answer means: the stored Plant, InvalidTokenAnswer when the token
 * itself was refused, a failure not worth another attempt (returned), or a thrown RetryableFailure.
 * `unanswered` is told when the POST may have reached the API without an answer telling its outcome: it
 * timed out, got no answer though a connection may have been made, or got a gateway's 502 or 504.
 */
async function postPlant(
  endpoint: Endpoint,
  body: string,
  token: string,
  mask: SecretMask,
  clock: Clock,
  signal: AbortSignal,
  unanswered: () => void,
): Promise<Plant | InvalidTokenAnswer | PlantStoreError> {
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
  let answer: Exchange | NoAnswer;
  try {
    answer = await exchange(endpoint, init, mask);
  } catch (error) {
    // Its timeout (its signal aborted), or a gateway's failure whose body was lost.
    const gatewayFailure = error instanceof PlantStoreError && GATEWAY_FAILURES.includes(error.status ?? 0);
    if (signal.aborted || gatewayFailure) unanswered();
    throw error;
  }
  if (answer instanceof NoAnswer) {
    if (!answer.neverConnected) unanswered();
    throw new RetryableFailure(answer.failure);
  }
  if (GATEWAY_FAILURES.includes(answer.status)) unanswered();
  if (answer.status === 200) return storedPlantOf(answer, endpoint.what, mask);
  const waitMs = retryAfterMs(answer.headers, clock);
  const failure = refusalOf(answer, waitMs, endpoint.what, mask);
  if (answer.status === 401 && isInvalidToken(answer.headers)) return new InvalidTokenAnswer(failure);
  if (!RETRYABLE_STATUSES.has(answer.status)) return failure;
  throw new RetryableFailure(failure, waitMs);
}

/** The Plant a 200 answers; a body that is not one is the server's fault, thrown. */
function storedPlantOf(answer: Exchange, what: string, mask: SecretMask): Plant {
  const plant = plantFrom(answer.body);
  if (plant) return plant;
  throw new PlantStoreError(`${what} answered 200 with a body that is not a Plant`, {
    kind: "unexpected-answer",
    status: 200,
    requestId: maskedRequestId(answer.headers, mask),
  });
}

/** The failure an answer other than 200 is: its kind, the server's message (masked), its Retry-After. */
function refusalOf(
  answer: Exchange,
  waitMs: number | undefined,
  what: string,
  mask: SecretMask,
): PlantStoreError {
  const { message } = jsonFields(answer.body);
  const serverMessage = mask.excerpt(typeof message === "string" ? message : answer.body) || undefined;
  return new PlantStoreError(`${what} answered ${answer.status}: ${serverMessage ?? "(no message)"}`, {
    kind: kindOfStatus(answer.status),
    status: answer.status,
    serverMessage,
    retryAfterSeconds: secondsOf(waitMs),
    requestId: maskedRequestId(answer.headers, mask),
  });
}

/** A 401 whose challenge says the token itself was refused (RFC 6750 `error="invalid_token"`). */
class InvalidTokenAnswer {
  constructor(readonly failure: PlantStoreError) {}
}

function isInvalidToken(headers: Headers): boolean {
  return /\berror\s*=\s*"?invalid_token"?/i.test(headers.get("www-authenticate") ?? "");
}

function plantsUrlFrom(baseUrl: string): string {
  const url = httpUrlOf(baseUrl, "baseUrl", "https://api.example.com");
  if (url.search || url.hash) throw new TypeError(`baseUrl must have no query or fragment, got ${baseUrl}`);
  const path = url.pathname.replace(/\/+$/, "");
  // The stack's ApiUrl output already ends in /plants; the specification's {base_url} does not.
  url.pathname = path.endsWith("/plants") ? path : `${path}/plants`;
  return url.toString();
}
