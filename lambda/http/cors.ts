/**
 * What a browser on an allowed origin may send and read, for API Gateway's CORS configuration
 * (infra/plant-store-stack.ts) and the local run's imitation of it: one definition of each list.
 * Without `exposeHeaders` a browser hides every answer header but the CORS-safelisted ones, so a
 * browser caller could not honour `Retry-After`, see why a token was refused, or quote a request id.
 */
export const CORS_ALLOW_HEADERS = ["authorization", "content-type"] as const;

export const CORS_EXPOSE_HEADERS = ["retry-after", "www-authenticate", "apigw-requestid"] as const;

/** How long a browser may cache a preflight's answer, in seconds. */
export const CORS_MAX_AGE_SECONDS = 3600;
