import type { PublicKeyMembers } from "./key-strength.ts";

/**
 * The checks of Ed25519 and Ed448 keys (key-strength.ts has the others), loaded when a key set holds an
 * OKP key: Cognito's and most issuers' sets are RSA, so a cold start rarely needs them.
 */

/** RFC 8037 §2: an OKP public key is exactly its curve's encoded point, this many bytes. */
const OKP_KEY_BYTES: ReadonlyMap<string, number> = new Map([
  ["Ed25519", 32],
  ["Ed448", 57],
]);

/** The y of Ed25519's two y-coordinates of order 8 (the other is p - y); from libsodium's list. */
const ED25519_ORDER_8_Y = 0x05fc536d880238b13933c6d305acdfd5f098eff289f4c345b027b2c28f95e826n;

/**
 * The public keys of small order (RFC 8032's curves have cofactors 8 and 4): with one, a signature of
 * R = a small-order point and S = 0 verifies for a share of all messages, with no private key. A key is
 * its y-coordinate in little-endian, then the sign of x in the top bit; these are every y of such a
 * point, including the non-canonical y + p where it still fits, as libsodium lists them for Ed25519.
 */
function smallOrderYs(crv: string): bigint[] | undefined {
  if (crv === "Ed25519") {
    const p = 2n ** 255n - 19n;
    return [0n, 1n, ED25519_ORDER_8_Y, p - ED25519_ORDER_8_Y, p - 1n, p, p + 1n];
  }
  if (crv === "Ed448") {
    const p = 2n ** 448n - 2n ** 224n - 1n;
    return [0n, 1n, p - 1n, p, p + 1n];
  }
  return undefined;
}

const smallOrderKeysByCurve = new Map<string, ReadonlySet<string>>();

/**
 * The small-order encodings of `crv` with the sign bit clear, as hex (a key matches one whatever its
 * sign bit), or undefined for another curve. Made at first use, not at import: a cold start that sees
 * no OKP key never pays for them.
 */
export function smallOrderKeys(crv: string): ReadonlySet<string> | undefined {
  const known = smallOrderKeysByCurve.get(crv);
  if (known) return known;
  const bytes = OKP_KEY_BYTES.get(crv);
  const ys = smallOrderYs(crv);
  if (bytes === undefined || ys === undefined) return undefined;
  const keys = new Set(ys.map((y) => littleEndian(y, bytes).toString("hex")));
  smallOrderKeysByCurve.set(crv, keys);
  return keys;
}

/**
 * `decoded` is key-strength.ts's canonical base64url reading, handed over: this module imports none of the
 * function's, so that it stays a chunk of its own and the entry imports no shared one.
 */
export function okpWeakness(
  { crv, x }: PublicKeyMembers,
  decoded: (member: string | undefined) => Buffer | undefined,
): string | undefined {
  const size = crv === undefined ? undefined : OKP_KEY_BYTES.get(crv);
  if (crv === undefined || size === undefined) return "its crv is not Ed25519 or Ed448";
  const key = decoded(x);
  if (key?.length !== size) return `its x is not a ${size}-byte ${crv} public key`;
  const withoutSign = Buffer.from(key);
  withoutSign[size - 1] = (withoutSign[size - 1] ?? 0) & 0x7f;
  if (smallOrderKeys(crv)?.has(withoutSign.toString("hex"))) return `it is a point of small order on ${crv}`;
  return undefined;
}

function littleEndian(value: bigint, bytes: number): Buffer {
  const buffer = Buffer.alloc(bytes);
  let rest = value;
  for (let index = 0; index < bytes; index++) {
    buffer[index] = Number(rest & 0xffn);
    rest >>= 8n;
  }
  return buffer;
}
