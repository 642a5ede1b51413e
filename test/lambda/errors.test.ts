/**
 * The one table of failures (lambda/errors.ts): every class names itself, and its declared status, kind
 * and metric are what the answer and the metrics use. Internal failures name themselves too, so that a
 * logged 500 says what it was.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import * as errors from "../../lambda/errors.ts";
import { toErrorResponse } from "../../lambda/http/error-response.ts";
import { METRIC_NAMES } from "../../lambda/metrics.ts";
import { RetriesExhaustedError } from "../../lambda/retry/standard-retry.ts";
import { DynamoDbError, TransientDynamoDbError } from "../../lambda/store/dynamodb-client.ts";
import { BEARER_CHALLENGE } from "../support/answers.ts";
import { fuzzRuns } from "../support/fuzz.ts";

const { API_ERRORS, ApiError } = errors;
const CODES = Object.keys(API_ERRORS) as errors.ApiErrorCode[];

describe("the table of failures", () => {
  it.each(CODES)("%sError names itself and is answered with its declared status, kind and metric", (code) => {
    const failure = new ApiError(code as errors.UnavailableCode, "what is wrong", { retryAfterSeconds: 3 });
    expect(failure.name).toBe(`${code}Error`);
    expect(String(failure)).toBe(`${code}Error: what is wrong`);
    const { response, kind, metric } = toErrorResponse(failure, "request-1");
    const declared = API_ERRORS[code];
    expect(response.status).toBe(declared.status);
    expect(response.body).toEqual({ error: declared.status, message: "what is wrong" });
    expect(kind).toBe(declared.kind);
    expect(metric).toBe("metric" in declared ? declared.metric : undefined);
    if (metric !== undefined) expect(METRIC_NAMES).toContain(metric);
  });

  it("challenges every 401 and 403, and gives every 503 its Retry-After", () => {
    for (const code of CODES) {
      const { headers } = toErrorResponse(
        new ApiError(code as errors.UnavailableCode, "m", { retryAfterSeconds: 7 }),
        "r",
      ).response;
      const { status } = API_ERRORS[code];
      if (status === 401 || status === 403)
        expect(headers?.["www-authenticate"]).toMatch(/^Bearer realm="plants"/);
      if (status === 503) expect(headers).toEqual({ "retry-after": "7" });
      if (status !== 401 && status !== 403 && status !== 503 && code !== "InvalidRequest") {
        expect(headers).toBeUndefined();
      }
    }
  });

  it("writes RFC 6750's challenge for each refusal of credentials", () => {
    type ChallengingCode = Exclude<errors.ApiErrorCode, errors.UnavailableCode | "InsufficientScope">;
    const challenge = (code: ChallengingCode, message: string) =>
      new ApiError(code, message).headers["www-authenticate"];
    expect(challenge("MissingCredentials", "no token")).toBe('Bearer realm="plants"');
    expect(challenge("InvalidRequest", "two headers")).toBe('Bearer realm="plants", error="invalid_request"');
    expect(challenge("InvalidToken", "the token has expired")).toBe(
      'Bearer realm="plants", error="invalid_token", error_description="the token has expired"',
    );
    // A message of printable ASCII but `"` and `\\` is written as it is.
    expect(challenge("UnknownSigningKey", "its key_ops is not verify alone")).toBe(
      'Bearer realm="plants", error="invalid_token", error_description="its key_ops is not verify alone"',
    );
    expect(
      new ApiError("InsufficientScope", "lacks it", { scope: "plants/write" }).headers["www-authenticate"],
    ).toBe('Bearer realm="plants", error="insufficient_scope", scope="plants/write"');
  });

  it("writes a challenge any client can parse, whatever the refusal's message holds", () => {
    fc.assert(
      fc.property(fc.string({ unit: "binary" }), (message) => {
        const header = new ApiError("InvalidToken", message).headers["www-authenticate"];
        expect(header).toMatch(BEARER_CHALLENGE);
      }),
      { numRuns: fuzzRuns(500, 0.1) },
    );
  });

  // The store's two 503 messages: store-faults.test.ts; a bug's generic 500 and its Fault: handler and metrics.
  it("names the internal failures a 500's log line shows", () => {
    expect(String(new DynamoDbError("ValidationException", 400, {}))).toMatch(/^DynamoDbError: /);
    expect(String(new TransientDynamoDbError("GetItem failed"))).toMatch(/^TransientDynamoDbError: /);
    expect(String(new RetriesExhaustedError(3, "attempts exhausted"))).toMatch(/^RetriesExhaustedError: /);
  });
});
