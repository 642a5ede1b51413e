import { commaList } from "../comma-list.ts";
import { ApiError } from "../errors.ts";

export const MAX_BODY_BYTES = 16_384;
const REPLACEMENT_CHARACTER = "\uFFFD";
const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/**
 * The body as API Gateway hands it over, not yet read (it is read after authentication):
 * - text, for JSON and text media types: API Gateway decoded the client's bytes as UTF-8, each
 *   sequence that was not UTF-8 replaced by one U+FFFD; `contentLength` is the request's header;
 * - base64 of the client's bytes, for every other media type.
 * `contentEncoding` is the request's Content-Encoding header, when it has one.
 */
export type RequestBody = (
  | { encoding: "text"; text: string; contentLength: string | undefined }
  | { encoding: "base64"; base64: string }
) & { contentEncoding?: string | undefined };

/**
 * The body as text, or the 4xx that says why it cannot be read: in a content coding (gzip, br…), absent,
 * too large, not base64, not UTF-8.
 */
export function readBodyText(body: RequestBody | undefined): string {
  if (body === undefined) return requireSize(0, "");
  requireIdentityCoding(body.contentEncoding);
  if (body.encoding === "text") return requireSize(bytesSent(body.text, body.contentLength), body.text);
  const bytes = decodeBase64Strictly(body.base64);
  requireSize(bytes.byteLength, "");
  try {
    return utf8.decode(bytes);
  } catch {
    throw new ApiError("BadRequest", "the body is not valid UTF-8");
  }
}

/** A longer Content-Encoding is cut to this many characters in the answer that names it. */
const MAX_NAMED_CODING_LENGTH = 64;

/**
 * API Gateway passes a compressed body through as it came, and the function does not decompress it:
 * reading it as plain bytes would refuse it for the wrong reason, or store whatever the bytes spell.
 * `identity` (RFC 9110 §8.4.1: no coding) is fine, in any case and with any whitespace, alone or listed.
 */
function requireIdentityCoding(contentEncoding: string | undefined): void {
  const codings = commaList(contentEncoding);
  if (codings.every((coding) => coding.toLowerCase() === "identity")) return;
  const named = codings.join(", ");
  const shown =
    named.length > MAX_NAMED_CODING_LENGTH ? `${named.slice(0, MAX_NAMED_CODING_LENGTH)}…` : named;
  throw new ApiError(
    "UnsupportedMediaType",
    `the Content-Encoding '${shown}' is not supported; send the body uncompressed`,
  );
}

function requireSize(bytes: number, text: string): string {
  if (bytes > MAX_BODY_BYTES) {
    throw new ApiError(
      "PayloadTooLarge",
      `the body is ${bytes} bytes; at most ${MAX_BODY_BYTES} are accepted`,
    );
  }
  if (bytes === 0) throw new ApiError("BadRequest", "the body is required: a NewPlant JSON object");
  return text;
}

/**
 * RFC 4648 §3.3: characters outside the alphabet, missing padding or data after it make the body
 * invalid, where `Buffer.from(text, "base64")` would skip or guess. A string is valid exactly when it
 * is the canonical encoding of what it decodes to, which is what API Gateway always sends.
 */
function decodeBase64Strictly(base64: string): Buffer {
  const bytes = Buffer.from(base64, "base64");
  if (bytes.toString("base64") !== base64) throw new ApiError("BadRequest", "the body is not valid base64");
  return bytes;
}

/**
 * The size of the body as the client sent it. Each U+FFFD in the text stands for 1 to 3 bytes that
 * were not UTF-8, so re-encoding the text overstates the size: the Content-Length is exact, and is
 * taken when the text can be what it describes; otherwise each U+FFFD counts as 1 byte. (A
 * Content-Length the text cannot match comes from a hand-made or misconfigured event, not from API
 * Gateway, and trusting it would let any body past the size limit.)
 */
function bytesSent(text: string, contentLength: string | undefined): number {
  const reencoded = Buffer.byteLength(text, "utf8");
  const atLeast = reencoded - 2 * (text.split(REPLACEMENT_CHARACTER).length - 1);
  const declared = /^\d{1,15}$/.test(contentLength ?? "") ? Number(contentLength) : Number.NaN;
  return declared >= atLeast && declared <= reencoded ? declared : atLeast;
}
