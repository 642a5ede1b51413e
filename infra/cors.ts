/**
 * What a browser on an allowed origin may send and read, for API Gateway's CORS configuration
 * (plant-store-stack.ts) and the local run's imitation of it: one definition of each list.
 * Without `exposeHeaders` a browser hides every answer header but the CORS-safelisted ones, so a
 * browser caller could not honour `Retry-After`, see why a token was refused, or quote a request id.
 */
export const CORS_ALLOW_HEADERS = ["authorization", "content-type"] as const;

export const CORS_EXPOSE_HEADERS = ["retry-after", "www-authenticate", "apigw-requestid"] as const;

/** How long a browser may cache a preflight's answer, in seconds. */
export const CORS_MAX_AGE_SECONDS = 3600;

/** What an allowed-origins entry must be, for the messages that refuse one. */
export const CORS_ORIGIN_RULE =
  "scheme://host[:port], http or https, lowercase, without a path or a trailing slash, or *";

/**
 * Whether `entry` can be an allowed-origins entry: `*`, or an origin exactly as a browser sends it in
 * `Origin`. API Gateway compares the header as a string, so an entry with a path, a trailing slash or
 * no scheme would never match, and CORS would fail in the browser, silently.
 */
export function isCorsOriginEntry(entry: string): boolean {
  if (entry === "*") return true;
  const url = URL.canParse(entry) ? new URL(entry) : undefined;
  return url !== undefined && (url.protocol === "https:" || url.protocol === "http:") && url.origin === entry;
}
