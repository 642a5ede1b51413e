/**
 * Secrets never leave in an error: whatever the token endpoint and the API answer, with the client secret
 * or a token echoed in any field the client reads (verbatim, URL-encoded, form-encoded, as the Basic
 * credentials of the request, in token_type, error, error_description, message, an echoed header), no
 * message, stack, property, util.inspect or JSON.stringify of what createPlant throws holds them.
 */
import { inspect } from "node:util";
import fc from "fast-check";
import { expect, it } from "vitest";
import { createPlantStoreClient } from "../../client/index.ts";
import { FakeClock } from "../support/fake-clock.ts";
import { fuzzRuns, fuzzTimeoutMs } from "../support/fuzz.ts";
import { json, PLANTS_URL, type RecordedRequest, START, scriptedFetch, settle, TOKEN_URL } from "./fakes.ts";

const CLIENT_ID = "client-id-1";

/** A secret or token no static text of the client contains (its prefix), with characters that encode. */
const credential = (prefix: string) =>
  fc
    .string({ unit: fc.constantFrom(..."aZ09+/=%&:!~ -_.*'()é☘"), minLength: 8, maxLength: 24 })
    .map((rest) => `${prefix}${rest}`);

const formEncoded = (text: string) => new URLSearchParams([["", text]]).toString().slice(1);
const basic = (secret: string) =>
  Buffer.from(`${formEncoded(CLIENT_ID)}:${formEncoded(secret)}`).toString("base64");

/** Every form the endpoint may echo a credential in. */
function echoedForms(secret: string, token: string): string[] {
  return [
    secret,
    encodeURIComponent(secret),
    encodeURIComponent(secret).replace(/%[0-9A-F]{2}/g, (hex) => hex.toLowerCase()),
    formEncoded(secret),
    basic(secret),
    `Basic ${basic(secret)}`,
    Buffer.from(`${CLIENT_ID}:${secret}`).toString("base64"),
    token,
    encodeURIComponent(token),
    formEncoded(token),
  ];
}

/**
 * What must not be found: the secret, the credentials of the Basic header, and the token once the client
 * was given it (before, it is just a string a server made up, which the client cannot know to hide).
 */
function forbidden(secret: string, token: string | undefined): string[] {
  const secretForms = [secret, encodeURIComponent(secret), formEncoded(secret), basic(secret)];
  return token === undefined ? secretForms : [...secretForms, token, encodeURIComponent(token)];
}

type Carrier =
  | "error"
  | "error_description"
  | "token_type"
  | "message"
  | "apigw-requestid"
  | "x-amzn-requestid"
  | "www-authenticate";

interface Scenario {
  /** The token endpoint's answer. */
  tokenStatus: 200 | 400 | 401 | 500 | 503;
  /** The API's answer, when a token was had. */
  apiStatus: 400 | 401 | 403 | 409 | 413 | 500 | 503;
  carriers: Carrier[];
  formIndex: number;
  prefix: string;
  suffix: string;
}

const scenario: fc.Arbitrary<Scenario> = fc.record({
  tokenStatus: fc.constantFrom(200, 200, 200, 400, 401, 500, 503),
  apiStatus: fc.constantFrom(400, 401, 403, 409, 413, 500, 503),
  carriers: fc.subarray(
    [
      "error",
      "error_description",
      "token_type",
      "message",
      "apigw-requestid",
      "x-amzn-requestid",
      "www-authenticate",
    ] as Carrier[],
    { minLength: 1 },
  ),
  formIndex: fc.nat(),
  prefix: fc.constantFrom("", "x", "Basic ", "secret=", "\t"),
  suffix: fc.constantFrom("", "y", " ", "&scope=a"),
});

/** An answer with `echo` in each carrier the scenario names, and in every field whose carrier is on. */
function answer(status: number, kind: "token" | "api", token: string, echo: string, carriers: Carrier[]) {
  const on = (carrier: Carrier) => carriers.includes(carrier);
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
      const forms = echoedForms(secret, token);
      const echo = `${sc.prefix}${forms[sc.formIndex % forms.length]}${sc.suffix}`;
      const clock = new FakeClock({ now: START });
      const fake = scriptedFetch(clock, (request: RecordedRequest) =>
        request.url === TOKEN_URL
          ? answer(sc.tokenStatus, "token", token, echo, sc.carriers)
          : answer(sc.apiStatus, "api", token, echo, sc.carriers),
      );
      const client = createPlantStoreClient({
        baseUrl: PLANTS_URL,
        credentials: { clientId: CLIENT_ID, clientSecret: secret, tokenUrl: TOKEN_URL },
        fetch: fake.fetch,
        clock,
        random: () => 0.5,
      });
      const error = (await settle(clock, client.createPlant({ id: 1n, name: "Fern" })).then(
        () => new Error("createPlant did not fail"),
        (thrown: unknown) => thrown,
      )) as Error;
      const shown = [
        error.message,
        error.stack,
        inspect(error, { depth: 10, showHidden: true }),
        JSON.stringify(error),
        JSON.stringify(Object.fromEntries(Object.entries(error))),
      ].join("\n");
      const given = sc.tokenStatus === 200 ? token : undefined;
      for (const form of forbidden(secret, given)) expect(shown).not.toContain(form);
    }),
    { numRuns: fuzzRuns(300) },
  );
});
