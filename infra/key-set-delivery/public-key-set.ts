/**
 * The key set delivered to the function with its deployment (JWKS_JSON): the issuer's public keys in
 * compact JSON, only the members the function reads, and never a key that publishes a private part.
 * Shared by the deploy-time reader (a custom resource's function), `-c jwks=<file>` at synth and the local
 * run; free of aws-cdk-lib so that the reader's bundle stays small.
 */

/** The function's environment variable that holds the delivered key set; empty or absent: none delivered. */
export const DELIVERED_KEY_SET_VARIABLE = "JWKS_JSON";

/** Lambda refuses a function whose environment, measured as JSON (`{"NAME":"value",…}`), exceeds 4 KB. */
export const ENVIRONMENT_LIMIT_BYTES = 4096;

/**
 * The public members of a key (RFC 7517 §4, RFC 7518 §6.2.1, §6.3.1, RFC 8037 §2): the set delivered is
 * the issuer's, cut to its public members and nothing else.
 */
const PUBLIC_MEMBERS = ["kty", "kid", "alg", "use", "n", "e", "crv", "x", "y", "key_ops", "ext"] as const;

/**
 * Members that only a private or symmetric key has (RFC 7518 §6.2.2, §6.3.2, §6.4; RFC 8037 §2): whoever
 * reads a key set holding one can sign tokens with it.
 */
export const PRIVATE_MEMBERS = ["d", "p", "q", "dp", "dq", "qi", "oth", "k"] as const;

/** The key types the function verifies tokens with (aws-jwt-verify's); it leaves any other key out. */
const VERIFIABLE_KTYS = ["RSA", "EC", "OKP"];
/** Why the function leaves a key of another kty out (lambda/auth/key-set.ts), logging it when the set arrives. */
const VERIFIABLE_ONLY =
  "the function verifies RS*, ES* and EdDSA tokens, with keys of kty RSA, EC or OKP only";

/** A key set that cannot be delivered, and why, in words an operator reads in the deploy's output. */
export class KeySetRefusedError extends Error {
  override name = "KeySetRefusedError";
}

/**
 * The key-set document `document` (parsed JSON) as the compact JSON to deliver: `{"keys":[…]}` with each
 * key cut to PUBLIC_MEMBERS, in the issuer's order. Throws KeySetRefusedError when it is not a key set,
 * holds no key, or any key has a private member: the whole set is refused, as jose refuses it, since an
 * issuer that publishes a private key has lost it. A set with no key of kty RSA, EC or OKP is refused too:
 * the function would leave every key of it out and verify no token with it.
 */
export function deliverableKeySet(document: unknown): string {
  if (!isPlainObject(document) || !Array.isArray(document.keys)) {
    throw new KeySetRefusedError('it is not a key set: a JSON object with a list "keys" (RFC 7517 §5)');
  }
  if (document.keys.length === 0) throw new KeySetRefusedError("it holds no keys");
  const keys = document.keys.map((entry: unknown, index: number) => {
    if (!isPlainObject(entry) || typeof entry.kty !== "string") {
      throw new KeySetRefusedError(`key ${index + 1} is not a JSON Web Key (an object with a kty)`);
    }
    const privateMember = PRIVATE_MEMBERS.find((member) => member in entry);
    if (privateMember !== undefined) {
      throw new KeySetRefusedError(
        `key ${describeKey(entry, index)} publishes the private member "${privateMember}": anyone who reads ` +
          "the key set can sign tokens with it, so no key of the set is delivered",
      );
    }
    return Object.fromEntries(PUBLIC_MEMBERS.filter((member) => member in entry).map((m) => [m, entry[m]]));
  });
  if (!keys.some((key) => VERIFIABLE_KTYS.includes(String(key.kty)))) {
    throw new KeySetRefusedError(`it holds no key of kty RSA, EC or OKP, and ${VERIFIABLE_ONLY}`);
  }
  return JSON.stringify({ keys });
}

/** The bytes `value` takes in the environment as Lambda measures it: JSON-escaped, without its quotes. */
export function environmentValueBytes(value: string): number {
  return Buffer.byteLength(JSON.stringify(value), "utf8") - 2;
}

/** How many keys the compact key set `keySetJson` holds, for the deploy's summary. */
export function keyCount(keySetJson: string): number {
  return (JSON.parse(keySetJson) as { keys: unknown[] }).keys.length;
}

/**
 * For the deploy's summary after the count of keys delivered: how many of them the function leaves out for
 * their kty, and why; "" when it can use every key's type.
 */
export function keysLeftOutNote(keySetJson: string): string {
  const { keys } = JSON.parse(keySetJson) as { keys: { kty: unknown }[] };
  const leftOut = keys.filter((key) => !VERIFIABLE_KTYS.includes(String(key.kty))).length;
  return leftOut === 0 ? "" : `; ${leftOut} of them of another kty, left out: ${VERIFIABLE_ONLY}`;
}

function describeKey(entry: Record<string, unknown>, index: number): string {
  return typeof entry.kid === "string" ? `"${entry.kid.slice(0, 64)}"` : String(index + 1);
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
