/**
 * CORS as API Gateway's HTTP API answers it when the stack sets `corsAllowOrigins`, for the local run
 * (PLANTS_CORS_ALLOW_ORIGINS): a preflight OPTIONS on any path is answered 204 by the gateway itself, with
 * the allowed methods and headers when the origin is allowed; any other answer to an allowed origin gets
 * `Access-Control-Allow-Origin` and the headers a browser may read (infra/cors.ts, the same lists
 * the stack configures). The token endpoint, which in AWS is Cognito's, answers the same way here.
 */

import {
  CORS_ALLOW_HEADERS,
  CORS_EXPOSE_HEADERS,
  CORS_MAX_AGE_SECONDS,
  CORS_ORIGIN_RULE,
  isCorsOriginEntry,
} from "../infra/cors.ts";
import { commaList } from "../lambda/comma-list.ts";
import { ROUTES } from "../lambda/http/routes.ts";
import type { HttpApiResult } from "./http-bridge.ts";

/** A page's origin as the docs write it: on 127.0.0.1, the host the local run serves on and prints. */
export const EXAMPLE_PAGE_ORIGIN = "http://127.0.0.1:5173";

/** The origins allowed to call from a browser, as a browser sends them (`scheme://host[:port]`), or `*`. */
export type CorsAllowOrigins = readonly string[];

type CorsHeaders = Record<string, string>;
const ALLOW_METHODS = [...new Set(ROUTES.map(({ method }) => method))].join(",");

/** PLANTS_CORS_ALLOW_ORIGINS as a list, or undefined (no CORS) when unset; each entry as infra/cors.ts says. */
export function corsAllowOriginsFrom(value: string | undefined): CorsAllowOrigins | undefined {
  const entries = commaList(value);
  if (entries.length === 0) return undefined;
  const refused = entries.find((entry) => !isCorsOriginEntry(entry));
  if (refused !== undefined) {
    throw new Error(
      `PLANTS_CORS_ALLOW_ORIGINS entry '${refused}' is not an origin: ${CORS_ORIGIN_RULE} (like ${EXAMPLE_PAGE_ORIGIN})`,
    );
  }
  return entries;
}

/** The headers naming the origin allowed to read an answer (it, or `*`); undefined when it is not allowed. */
function allowedOrigin(origin: string | undefined, allowOrigins: CorsAllowOrigins): CorsHeaders | undefined {
  if (origin === undefined) return undefined;
  if (allowOrigins.includes("*")) return { "access-control-allow-origin": "*" };
  return allowOrigins.includes(origin)
    ? { "access-control-allow-origin": origin, vary: "origin" }
    : undefined;
}

/** API Gateway's own answer to a preflight: 204, with the CORS headers only for an allowed origin. */
export function preflightResult(origin: string | undefined, allowOrigins: CorsAllowOrigins): HttpApiResult {
  const allowed = allowedOrigin(origin, allowOrigins);
  if (allowed === undefined) return { statusCode: 204, headers: {} };
  return {
    statusCode: 204,
    headers: {
      ...allowed,
      "access-control-allow-methods": ALLOW_METHODS,
      "access-control-allow-headers": CORS_ALLOW_HEADERS.join(","),
      "access-control-max-age": String(CORS_MAX_AGE_SECONDS),
    },
  };
}

/** The headers API Gateway adds to an answer to an allowed origin; none for any other. */
export function corsAnswerHeaders(origin: string | undefined, allowOrigins: CorsAllowOrigins): CorsHeaders {
  const allowed = allowedOrigin(origin, allowOrigins);
  return allowed ? { ...allowed, "access-control-expose-headers": CORS_EXPOSE_HEADERS.join(",") } : {};
}

/**
 * Why a browser on `origin` may not read this answer, for the local run's log; undefined when it may (or
 * when no browser origin was sent). The page itself only ever sees "Failed to fetch".
 */
export function originRefusal(
  origin: string | undefined,
  allowOrigins: CorsAllowOrigins | undefined,
): string | undefined {
  if (origin === undefined) return undefined;
  if (allowOrigins === undefined) {
    return `browser origin ${origin} refused: CORS is off (PLANTS_CORS_ALLOW_ORIGINS=${origin} allows it)`;
  }
  if (allowedOrigin(origin, allowOrigins) !== undefined) return undefined;
  const loopbackTwin = origin.replace(
    /^(https?:\/\/)(localhost|127\.0\.0\.1)(?=:|$)/,
    (_, scheme, host) => `${scheme}${host === "localhost" ? "127.0.0.1" : "localhost"}`,
  );
  const hint =
    loopbackTwin !== origin && allowOrigins.includes(loopbackTwin)
      ? ` (localhost and 127.0.0.1 are different origins to a browser)`
      : "";
  return `browser origin ${origin} refused: PLANTS_CORS_ALLOW_ORIGINS allows ${allowOrigins.join(", ")}${hint}`;
}
