/**
 * A client for the Plant Store API (POST /plants): openapi-fetch over the types openapi-typescript
 * generates from openapi/openapi.yaml (client/generated/, `npm run generate`), bodies written and read by
 * lossless-json so that every int64 id stays exact, and client-credentials tokens by oauth4webapi. What
 * those libraries do not do is its own: tokens kept until they expire, resends only where they are safe,
 * redirects never followed, answers capped, deadlines, credentials masked out of every error, and a
 * `kind` on each. It runs on Node 20.3+ and in browsers, with the global fetch.
 *
 *   const client = createPlantStoreClient({ baseUrl, credentials: { clientId, clientSecret, tokenUrl } });
 *   const plant = await client.createPlant({ id: 9223372036854775807n, name: "Fern", tag: "fern" });
 */
import { stringify } from "lossless-json";
import createClient from "openapi-fetch";
import { type Clock, systemClock } from "./clock.ts";
import { PlantStoreError, TokenEndpointError } from "./errors.ts";
import { type components, NEW_PLANT_PROPERTIES, PLANT_PROPERTIES, type paths } from "./generated/openapi.ts";
import {
  type Endpoint,
  exchange,
  type FetchFunction,
  failureOf,
  httpUrlOf,
  jsonObject,
  NoAnswer,
  requestIdOf,
  unlessAborted,
} from "./http-exchange.ts";
import { type PlantIdInput, plantIdFrom } from "./int64-id.ts";
import type { RetryOptions } from "./retry.ts";
import {
  RetryableFailure,
  RetryQuota,
  refuseUnknownNames,
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
export type { components, paths } from "./generated/openapi.ts";
export { type FetchFunction, MAX_ANSWER_BYTES } from "./http-exchange.ts";
export { INT64_MAX, INT64_MIN, type PlantIdInput, plantIdFrom } from "./int64-id.ts";
export { DEFAULT_RETRY_POLICY, RETRYABLE_STATUSES, type RetryOptions } from "./retry.ts";
export type { BearerToken, ClientCredentials, Credentials, TokenFunctionResult } from "./tokens.ts";

type Schemas = components["schemas"];
/** What the API answers: the specification's Plant. */
export type Plant = Schemas["Plant"];
/**
 * What `createPlant` takes: the specification's NewPlant, with the id as a bigint, a string of digits or a
 * safe integer, and an optional property given as undefined taken as absent.
 */
export type NewPlant = {
  [K in keyof Schemas["NewPlant"]]: K extends "id"
    ? PlantIdInput
    : Schemas["NewPlant"][K] | (object extends Pick<Schemas["NewPlant"], K> ? undefined : never);
};
/**
 * `P`, when it has no property a NewPlant lacks: a literal `{ id, name, tga }` (or a variable of such a
 * type) given to createPlant is a type error naming `tga`, as the API would refuse it.
 */
export type ExactNewPlant<P> = P & { [K in Exclude<keyof P, keyof NewPlant>]: never };

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
  refuseUnknownNames(options, OPTION_NAMES, "createPlantStoreClient");
  const plantsUrl = plantsUrlFrom(options.baseUrl);
  const context: TokenContext = {
    fetch: options.fetch ?? ((input, init) => globalThis.fetch(input, init)),
    clock: options.clock ?? systemClock,
    random: options.random ?? Math.random,
    policy: retryPolicyFrom(options.retry),
    quota: new RetryQuota(),
    // One that never aborts stands for none: every call's signal is then AbortSignal.any of two or one.
    signal: options.signal ?? new AbortController().signal,
  };
  const tokens = tokenSourceFor(options.credentials, context);
  const what = `POST ${plantsUrl}`;
  const api = createClient<paths>({
    baseUrl: plantsUrl.slice(0, -"/plants".length),
    bodySerializer: (body) => stringify(body) ?? "",
  });

  return {
    plantsUrl,
    async createPlant(plant, callOptions = {}) {
      const body = wirePlant(plant); // a TypeError here, before any token or request
      // AbortSignal.any holds no listener on the signals it joins: a client signal shared by many calls leaks none.
      const signal = AbortSignal.any([context.signal, callOptions.signal ?? context.signal]);
      let outcomeUnknown = false;
      try {
        signal.throwIfAborted();
        const deadlineAt = context.clock.now() + context.policy.deadlineMs;
        // A token fetch is shared by the calls waiting for it: this one stops waiting, the fetch goes on.
        const tokenFor = () => unlessAborted(tokens.token(deadlineAt), signal);
        let token = await tokenFor();
        let tokenReplaced = false;
        const post: Post = {
          api,
          body,
          token: () => token,
          endpoint: { what, option: "baseUrl", fetch: context.fetch, mask: tokens.mask },
          clock: context.clock,
          unanswered: () => {
            outcomeUnknown = true;
          },
          // The API refused the token itself (revoked, rotated): one new token, once, never a loop.
          refused: () => {
            if (tokenReplaced || !tokens.replace(token)) return undefined;
            tokenReplaced = true;
            return async () => {
              token = await tokenFor();
            };
          },
        };
        return await requestWithRetries({ ...context, signal, what, deadlineAt }, (attemptSignal) =>
          postPlant({ ...post, endpoint: { ...post.endpoint, mask: tokens.mask } }, attemptSignal),
        );
      } catch (error) {
        // An abort is thrown with its reason as it is.
        throw outcomeUnknown && !signal.aborted ? withUnknownOutcome(error) : error;
      }
    },
  };
}

/**
 * The request body's value, or a TypeError naming what is wrong before anything is sent: the id an exact
 * bigint (which lossless-json writes as its digits), no property the contract lacks, none undefined.
 */
function wirePlant(plant: NewPlant): Schemas["NewPlant"] {
  if (typeof plant !== "object" || plant === null) throw new TypeError("createPlant needs a plant object");
  const names = Object.keys(NEW_PLANT_PROPERTIES);
  const unknown = Object.keys(plant).find((key) => !Object.hasOwn(NEW_PLANT_PROPERTIES, key));
  if (unknown !== undefined) {
    throw new TypeError(
      `unknown property '${unknown.slice(0, 64)}': a NewPlant has only ${names.join(", ")}`,
    );
  }
  const given = Object.entries(plant).filter(([, value]) => value !== undefined);
  return { ...Object.fromEntries(given), id: plantIdFrom(plant.id) } as Schemas["NewPlant"];
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
  const message = `${error.message}; the plant may have been stored: sending the same create again is safe (200 if it was)`;
  return isToken ? new TokenEndpointError(message, { ...error }) : new PlantStoreError(message, { ...error });
}

/** A gateway's answers that say the API gave it none in time: the POST may have been stored. */
const GATEWAY_FAILURES = [502, 504];

interface Post {
  api: ReturnType<typeof createClient<paths>>;
  endpoint: Endpoint;
  body: Schemas["NewPlant"];
  token: () => string;
  clock: Clock;
  /** Told when the POST may have reached the API without an answer telling its outcome. */
  unanswered: () => void;
  /** Asked when the API refused the token itself: what fetches a new one, or undefined when none can be had. */
  refused: () => (() => Promise<void>) | undefined;
}

/**
 * One POST of the plant through openapi-fetch: the stored Plant, or a thrown failure (a RetryableFailure
 * when worth another attempt). The POST may have reached the API unanswered when it timed out, got no
 * answer though a connection may have been made, or got a gateway's 502 or 504.
 */
async function postPlant(post: Post, signal: AbortSignal): Promise<Plant> {
  const { endpoint, clock } = post;
  let text = "";
  let answer: Response;
  try {
    ({ response: answer } = await post.api.POST("/plants", {
      body: post.body,
      headers: { authorization: `Bearer ${post.token()}`, accept: "application/json" },
      parseAs: "text",
      // The caller's fetch is given the URL, and the body as the text lossless-json wrote.
      fetch: async (request: Request) => {
        const init = { method: request.method, headers: request.headers, body: await request.text(), signal };
        const response = await exchange(endpoint, request.url, init);
        text = await response.clone().text();
        return response;
      },
    }));
  } catch (error) {
    // Its timeout (its signal aborted), no answer, or a gateway's failure whose body was lost.
    const status = error instanceof PlantStoreError ? error.status : undefined;
    const noAnswer = error instanceof NoAnswer && !error.neverConnected;
    if (signal.aborted || noAnswer || GATEWAY_FAILURES.includes(status ?? 0)) post.unanswered();
    throw error;
  }
  if (GATEWAY_FAILURES.includes(answer.status)) post.unanswered();
  if (answer.status === 200) {
    const plant = plantFrom(text);
    if (plant) return plant;
    throw new PlantStoreError(`${endpoint.what} answered 200 with a body that is not a Plant`, {
      kind: "unexpected-answer",
      status: 200,
      requestId: requestIdOf(answer.headers, endpoint.mask),
    });
  }
  const { message } = jsonObject(text);
  const serverMessage = endpoint.mask.excerpt(typeof message === "string" ? message : text) || undefined;
  const failure = failureOf(answer, { mask: endpoint.mask, clock }, (status, details) => {
    const said = serverMessage ?? "(no message)";
    return new PlantStoreError(`${endpoint.what} answered ${status}: ${said}`, { ...details, serverMessage });
  });
  const newToken = answer.status === 401 && isInvalidToken(answer.headers) ? post.refused() : undefined;
  if (newToken && failure instanceof PlantStoreError)
    throw new RetryableFailure(failure, undefined, newToken);
  throw failure;
}

/**
 * The Plant a 200 answers, read by lossless-json, or undefined when the body is not one. Properties the
 * contract does not name (a field the API gained after this client was generated) are left out.
 */
function plantFrom(text: string): Plant | undefined {
  const value = jsonObject(text);
  const plant: Record<string, unknown> = {};
  for (const [name, required] of Object.entries(PLANT_PROPERTIES)) {
    if (value[name] !== undefined) plant[name] = value[name];
    else if (required) return undefined;
  }
  return plant as Plant;
}

/** A 401 whose challenge says the token itself was refused (RFC 6750 `error="invalid_token"`). */
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
