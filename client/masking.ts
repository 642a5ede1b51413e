/**
 * Credentials masked out of the server's words before they go into an error. A server may echo a client
 * secret or a token in any form: as it is, in another letter case, URL- or form-encoded, base64 or
 * base64url (padded or not, alone, inside the Basic credentials of the token request or inside any longer
 * base64), hex, or cut short. So every form is listed, compared without regard to case, and any run of
 * MIN_MASKED_RUN characters of one is masked, wherever it starts and ends.
 */

const REDACTED = "[redacted]";
/** A run this long of a credential's form is masked on its own: a truncated or partial echo. */
const MIN_MASKED_RUN = 8;
/** A form shorter than this is not masked (a 3-letter token would mask every word holding it). */
const MIN_MASKED_FORM = 4;

/** The credentials a client must never show, in every form; `with` adds more without changing this one. @internal */
export class SecretMask {
  readonly #credentials: readonly string[];
  readonly #extraForms: readonly string[];
  /** Every MIN_MASKED_RUN-character run of every form, case-folded; and the forms too short for one. */
  readonly #runs = new Set<string>();
  readonly #shortForms: string[] = [];
  /** The longest form's length: how far past a cut a run that starts before it may reach. */
  readonly #longest: number = 0;

  constructor(credentials: readonly string[] = [], extraForms: readonly string[] = []) {
    this.#credentials = credentials;
    this.#extraForms = extraForms;
    const forms = [...credentials.flatMap(credentialForms), ...extraForms];
    for (const form of new Set(forms.map(folded))) {
      if (form.length < MIN_MASKED_FORM) continue;
      this.#longest = Math.max(this.#longest, form.length);
      if (form.length < MIN_MASKED_RUN) this.#shortForms.push(form);
      for (let start = 0; start + MIN_MASKED_RUN <= form.length; start++) {
        this.#runs.add(form.slice(start, start + MIN_MASKED_RUN));
      }
    }
  }

  /** This mask and `credentials` too. */
  with(...credentials: string[]): SecretMask {
    return new SecretMask([...this.#credentials, ...credentials], this.#extraForms);
  }

  /**
   * Server words for an error: every credential masked, cut at `maxLength` characters of the original,
   * never inside a masked run (a cut cannot split a credential out of its mask).
   */
  excerpt(text: string, maxLength = 200): string {
    // What lies past the cut is never shown, but may finish a run that starts before it.
    const window = text.slice(0, maxLength + this.#longest);
    const folding = folded(window);
    const hidden = new Uint8Array(window.length);
    for (let start = 0; start + MIN_MASKED_RUN <= folding.length; start++) {
      if (this.#runs.has(folding.slice(start, start + MIN_MASKED_RUN))) {
        hidden.fill(1, start, start + MIN_MASKED_RUN);
      }
    }
    for (const form of this.#shortForms) {
      for (let at = folding.indexOf(form); at !== -1; at = folding.indexOf(form, at + 1)) {
        hidden.fill(1, at, at + form.length);
      }
    }
    let result = "";
    for (let at = 0; at < Math.min(maxLength, window.length); at++) {
      if (!hidden[at]) result += window[at];
      else if (!hidden[at - 1]) result += REDACTED;
    }
    return text.length > maxLength ? `${result}…` : result;
  }
}

/** Every form in which a server may echo `credential` (letter case aside: matching ignores it). @internal */
export function credentialForms(credential: string): string[] {
  const bytes = new TextEncoder().encode(credential);
  return [
    credential,
    encodeURIComponent(credential),
    formEncoded(credential),
    ...base64Forms(bytes),
    [...bytes].map((byte) => byte.toString(16).padStart(2, "0")).join(""),
  ];
}

/** The Basic credentials of `clientId` and `clientSecret` as a token endpoint may echo them, in every base64. @internal */
export function basicCredentialForms(clientId: string, clientSecret: string): string[] {
  const encoder = new TextEncoder();
  return [
    `${formEncoded(clientId)}:${formEncoded(clientSecret)}`, // RFC 6749 §2.3.1, as the client sends it
    `${clientId}:${clientSecret}`, // RFC 7617, as other clients send it
  ].flatMap((pair) => base64Forms(encoder.encode(pair)));
}

/** `value` as application/x-www-form-urlencoded writes it (a space as `+`). @internal */
export function formEncoded(value: string): string {
  return new URLSearchParams([["", value]]).toString().slice(1);
}

/** Base64 of the bytes, padded (btoa cannot take characters beyond Latin-1, so bytes, not text). @internal */
export function base64(bytes: Uint8Array): string {
  let binary = "";
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary);
}

/**
 * Base64 and base64url of the bytes, alone and inside longer base64 (`Bearer <token>` encoded whole): base64
 * takes 3 bytes at a time, so bytes after 1 or 2 others are written otherwise. Those forms are the
 * characters that depend on these bytes alone: the groups between the one shared with what comes before
 * and the one shared with what comes after. Unpadded ones are runs of these, masked as such.
 */
function base64Forms(bytes: Uint8Array): string[] {
  const forms = [base64(bytes)];
  for (const shift of [1, 2]) {
    const shifted = base64(new Uint8Array([...new Uint8Array(shift), ...bytes]));
    forms.push(shifted.slice(4, (shift + bytes.length) % 3 === 0 ? undefined : -4));
  }
  return forms.flatMap((form) => [form, form.replaceAll("+", "-").replaceAll("/", "_")]);
}

/** `text` in lower case, one UTF-16 unit for one, so that positions in it are positions in `text`. */
function folded(text: string): string {
  let result = "";
  for (const unit of text) {
    const lower = unit.toLowerCase();
    result += lower.length === unit.length ? lower : unit;
  }
  return result;
}
