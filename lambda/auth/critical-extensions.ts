import { InvalidTokenError } from "../errors.ts";

/**
 * RFC 7515 §4.1.11: `crit` lists header extensions the recipient must understand, or refuse the
 * token. This API implements none, so any `crit` refuses the token: a list of names as an
 * unsupported extension (`b64: false` under `crit` would sign a payload other than the one we read),
 * anything else (empty list, not a list, not names) as malformed. Nothing of the value is echoed.
 */
export function refuseCriticalExtensions(header: Record<string, unknown>): void {
  if (!Object.hasOwn(header, "crit")) return;
  const { crit } = header;
  const wellFormed =
    Array.isArray(crit) && crit.length > 0 && crit.every((name) => typeof name === "string" && name !== "");
  throw new InvalidTokenError(
    wellFormed
      ? "the token is invalid: it requires a header extension this API does not implement (crit)"
      : "the token is invalid: malformed crit header",
  );
}
