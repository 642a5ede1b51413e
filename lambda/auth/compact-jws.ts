import { InvalidTokenError } from "../errors.ts";

/** A token as sent, split and decoded but not verified: nothing in it is to be trusted yet. */
export interface UnverifiedJws {
  header: Record<string, unknown>;
  payload: Record<string, unknown>;
  /** `<header>.<payload>` as sent: the bytes the signature covers. */
  signingInput: string;
  signature: Buffer;
}

const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/**
 * A JWS in compact serialization (RFC 7515 §7.1): exactly three base64url segments, none padded or
 * empty, the header and payload each a JSON object in UTF-8. Anything else is a malformed token (401),
 * whatever it is: a JSON serialization, a JWE (five segments), a token cut or padded in transit.
 */
export function decodeCompactJws(token: string): UnverifiedJws {
  const [header, payload, signature, extra] = token.split(".", 4);
  if (header === undefined || payload === undefined || signature === undefined || extra !== undefined) {
    throw malformed();
  }
  return {
    header: jsonObject(header),
    payload: jsonObject(payload),
    signingInput: `${header}.${payload}`,
    signature: base64urlBytes(signature),
  };
}

/**
 * RFC 7515 §2: base64url without padding. Node's decoder skips what is not of the alphabet, so a
 * segment is taken only if encoding its bytes gives it back: no padding, no other characters, no
 * length of 4n+1, no stray bits in the last character. Then one token has one spelling.
 */
function base64urlBytes(segment: string): Buffer {
  const bytes = canonicalBase64url(segment);
  if (bytes === undefined) throw malformed();
  return bytes;
}

/** The bytes of a non-empty base64url string in its one canonical spelling (above); else undefined. */
export function canonicalBase64url(segment: string): Buffer | undefined {
  const bytes = Buffer.from(segment, "base64url");
  return segment !== "" && bytes.toString("base64url") === segment ? bytes : undefined;
}

function jsonObject(segment: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(utf8.decode(base64urlBytes(segment)));
  } catch {
    throw malformed();
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw malformed();
  return value as Record<string, unknown>;
}

export function malformed(): InvalidTokenError {
  return new InvalidTokenError("the token is invalid: malformed token");
}
