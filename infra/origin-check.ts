/** The header CloudFront adds to every request it sends the API (infra/edge-protection.ts). */
export const ORIGIN_VERIFY_HEADER = "x-origin-verify";

/** The origin check's environment variable holding the header's expected value. */
export const ORIGIN_VERIFY_VARIABLE = "ORIGIN_VERIFY";

/**
 * The origin check, an HTTP API Lambda authorizer (simple responses), as the inline source Lambda runs
 * (CommonJS, no dependencies): a request is authorized only when its header equals the expected value,
 * compared in constant time. An empty expected value authorizes nothing.
 */
export const ORIGIN_CHECK_SOURCE = `
const { timingSafeEqual } = require("node:crypto");
const expected = Buffer.from(process.env.${ORIGIN_VERIFY_VARIABLE} || "");
exports.handler = async (event) => {
  const given = Buffer.from((event && event.headers && event.headers["${ORIGIN_VERIFY_HEADER}"]) || "");
  return { isAuthorized: expected.length > 0 && given.length === expected.length && timingSafeEqual(given, expected) };
};
`;
