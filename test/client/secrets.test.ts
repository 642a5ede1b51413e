/**
 * Secrets never leave in an error: whatever the token endpoint and the API answer, with the client secret
 * or a token echoed in any field the client reads (as it is, upper- or lower-case, URL-encoded,
 * form-encoded, base64 or base64url, padded or not, alone or inside longer base64, hex, as the Basic
 * credentials of the request, cut short; in token_type, error, error_description, message, an echoed
 * header, a redirect's Location, or the message and cause chain of a fetch that got no answer), no
 * message, stack, property, cause, util.inspect or JSON.stringify of what createPlant throws holds them.
 */
import { inspect } from "node:util";
import fc from "fast-check";
import { expect, it } from "vitest";
import { fuzzRuns, fuzzTimeoutMs } from "../support/fuzz.ts";
import { CREDENTIALS, clientOnFakes, json, PLANTS_URL } from "./fakes.ts";

const CLIENT_ID = CREDENTIALS.clientId;

/** A secret or token no static text of the client contains (its prefix), with characters that encode. */
const credential = (prefix: string) =>
  fc
    .string({ unit: fc.constantFrom(..."aZ09+/=%&:!~ -_.*'()é☘"), minLength: 8, maxLength: 24 })
    .map((rest) => `${prefix}${rest}`);

const formEncoded = (text: string) => new URLSearchParams([["", text]]).toString().slice(1);
const base64url = (base64: string) => base64.replaceAll("+", "-").replaceAll("/", "_");
const unpadded = (base64: string) => base64.replace(/=+$/, "");
const hex = (text: string) => Buffer.from(text).toString("hex");
const basic = (secret: string) =>
  Buffer.from(`${formEncoded(CLIENT_ID)}:${formEncoded(secret)}`).toString("base64");
const plainBasic = (secret: string) => Buffer.from(`${CLIENT_ID}:${secret}`).toString("base64");

/**
 * What base64 of longer text holding `credential` after 1 or 2 other bytes (`Bearer <token>` is 7) shows
 * of it: the characters its bytes alone decide, between the groups it shares with its neighbours.
 */
function inLongerBase64(credential: string): string[] {
  return [1, 2].map((shift) => {
    const bytes = Buffer.concat([Buffer.alloc(shift, "p"), Buffer.from(credential)]);
    const encoded = bytes.toString("base64");
    return encoded.slice(4, bytes.length % 3 === 0 ? undefined : -4);
  });
}

/** Every form a server may echo a credential in: as it is, in either case, encoded every way, cut short or not. */
function credentialForms(credential: string): string[] {
  const base64 = Buffer.from(credential).toString("base64");
  return [
    ...inLongerBase64(credential),
    credential,
    credential.toUpperCase(),
    credential.toLowerCase(),
    encodeURIComponent(credential),
    encodeURIComponent(credential).replace(/%[0-9A-F]{2}/g, (percentEscape) => percentEscape.toLowerCase()),
    formEncoded(credential),
    base64,
    unpadded(base64),
    base64url(base64),
    unpadded(base64url(base64)),
    hex(credential),
    hex(credential).toUpperCase(),
  ];
}

/** The forms of the secret, and of the Basic credentials made of it (RFC 6749's and RFC 7617's), every base64. */
function secretForms(secret: string): string[] {
  const basics = [basic(secret), plainBasic(secret)].flatMap((padded) => [
    padded,
    unpadded(padded),
    base64url(padded),
    unpadded(base64url(padded)),
  ]);
  return [...credentialForms(secret), ...basics];
}

/**
 * What the server echoes: a form of the secret or of the token, cut to its first `keep` characters when
 * the scenario says (at least 8: a shorter piece of a credential is not masked).
 */
function echoed(secret: string, token: string, formIndex: number, keep: number | null) {
  const forms = [
    ...secretForms(secret).map((form) => ({ form, of: "secret" as const })),
    ...credentialForms(token).map((form) => ({ form, of: "token" as const })),
  ];
  const chosen = forms[formIndex % forms.length] as (typeof forms)[number];
  return keep === null ? chosen : { ...chosen, form: chosen.form.slice(0, keep) };
}

/**
 * What must not be found: every form of the secret and of the Basic credentials, every form of the token
 * once the client was given it (before, it is just a string a server made up, which the client cannot
 * know to hide), and what was echoed, whole or cut.
 */
function forbidden(secret: string, token: string | undefined, echo: ReturnType<typeof echoed>) {
  const forms =
    token === undefined ? secretForms(secret) : [...secretForms(secret), ...credentialForms(token)];
  return echo.of === "token" && token === undefined ? forms : [...forms, echo.form];
}

/** Where an answer may echo a credential. */
const CARRIERS = [
  "thrown",
  "location",
  "error",
  "error_description",
  "token_type",
  "message",
  "apigw-requestid",
  "x-amzn-requestid",
  "www-authenticate",
] as const;
type Carrier = (typeof CARRIERS)[number];

const scenario = fc.record({
  /** The token endpoint's answer. */
  tokenStatus: fc.constantFrom(200, 200, 200, 400, 401, 500, 503),
  /** The API's answer, when a token was had. */
  apiStatus: fc.constantFrom(400, 401, 403, 409, 413, 500, 503),
  carriers: fc.subarray([...CARRIERS], { minLength: 1 }),
  formIndex: fc.nat(),
  /** Where the echoed form is cut, or null when it is whole. */
  keep: fc.option(fc.integer({ min: 8, max: 60 })),
  prefix: fc.constantFrom("", "x", "Basic ", "secret=", "\t"),
  suffix: fc.constantFrom("", "y", " ", "&scope=a"),
});

/** An answer with `echo` in each carrier the scenario names, and in every field whose carrier is on. */
function answer(status: number, kind: "token" | "api", token: string, echo: string, carriers: Carrier[]) {
  const on = (carrier: Carrier) => carriers.includes(carrier);
  // No answer: the runtime's error, its message and its cause chain holding the echo (as undici's holds a URL).
  if (on("thrown")) {
    throw new TypeError(`fetch failed ${echo}`, {
      cause: Object.assign(new TypeError(`Invalid URL ${echo}`), { code: echo, input: echo }),
    });
  }
  // A redirect whose Location holds the echo.
  if (on("location")) {
    return new Response(null, { status: 307, headers: { location: `https://elsewhere.test/?q=${echo}` } });
  }
  const headers: Record<string, string> = {};
  for (const header of ["apigw-requestid", "x-amzn-requestid"] as const)
    if (on(header)) headers[header] = echo;
  if (on("www-authenticate")) {
    headers["www-authenticate"] =
      kind === "api"
        ? `Bearer error="invalid_token", error_description="${echo.replaceAll('"', "'")}"`
        : `Basic realm="${echo.replaceAll('"', "'")}"`;
  }
  if (status >= 500) headers["retry-after"] = "1";
  const body: Record<string, unknown> = {};
  if (kind === "token" && status === 200) {
    Object.assign(body, {
      access_token: token,
      expires_in: 3600,
      token_type: on("token_type") ? echo : "Bearer",
    });
  } else if (kind === "token") {
    body.error = on("error") ? echo : "invalid_client";
    if (on("error_description")) body.error_description = echo;
    if (on("message")) body.message = echo;
  } else {
    body.error = status;
    body.message = on("message") || on("error") ? echo : "refused";
  }
  return json(status, body, headers);
}

it("no error of createPlant holds the client secret, a token or the Basic credentials, in any form", {
  timeout: fuzzTimeoutMs(fuzzRuns(300), 20),
}, async () => {
  await fc.assert(
    fc.asyncProperty(credential("Qv"), credential("Tk"), scenario, async (secret, token, sc) => {
      const echo = echoed(secret, token, sc.formIndex, sc.keep);
      const said = `${sc.prefix}${echo.form}${sc.suffix}`;
      const { failure } = clientOnFakes({
        answerToken: () => answer(sc.tokenStatus, "token", token, said, sc.carriers),
        answerPlants: () => answer(sc.apiStatus, "api", token, said, sc.carriers),
        options: { credentials: { ...CREDENTIALS, clientSecret: secret } },
      });
      const error = await failure();
      expect(error.cause).toBeUndefined();
      const shown = [
        error.message,
        error.stack,
        inspect(error, { depth: 10, showHidden: true }),
        JSON.stringify(error),
        JSON.stringify(Object.fromEntries(Object.entries(error))),
      ].join("\n");
      const given =
        sc.tokenStatus === 200 && !sc.carriers.includes("thrown") && !sc.carriers.includes("location")
          ? token
          : undefined;
      for (const form of forbidden(secret, given, echo)) expect(shown).not.toContain(form);
    }),
    { numRuns: fuzzRuns(300) },
  );
});

it("masks a credential shorter than a masked run (4 to 7 characters) wherever it is echoed whole", async () => {
  for (const token of ["Tk5x", "Tk5xQ9z"]) {
    const { failure } = clientOnFakes({
      answerPlants: () => json(403, { error: 403, message: `not for ${token}, ${token.toLowerCase()}` }),
      options: { credentials: { token } },
    });
    const error = await failure();
    expect(error.message).toBe(`POST ${PLANTS_URL} answered 403: not for [redacted], [redacted]`);
  }
});
