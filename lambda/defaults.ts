/**
 * The function's defaults, each defined once: lambda/config.ts applies them, and the stack, the local run
 * and the documentation's generator (tools/deploy-facts.ts) read them from here.
 */

/** The OAuth scope a token must carry to create plants (REQUIRED_SCOPE). */
export const DEFAULT_REQUIRED_SCOPE = "plants/write";

/** Time spent on the store, retries included, before answering 503 (STORE_DEADLINE_MS). */
export const DEFAULT_STORE_DEADLINE_MS = 3000;

/** Time one store call may take (STORE_ATTEMPT_TIMEOUT_MS), never more than the deadline. */
export const DEFAULT_STORE_ATTEMPT_TIMEOUT_MS = 1000;

/** Store calls per request, the first included, as in the AWS SDKs' standard retry mode (STORE_MAX_ATTEMPTS). */
export const DEFAULT_STORE_MAX_ATTEMPTS = 3;
