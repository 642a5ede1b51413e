/**
 * The one table of failures (lambda/errors.ts): every class names itself, and its declared status, kind
 * and metric are what the answer and the metrics use. Internal failures name themselves too, so that a
 * logged 500 says what it was.
 */
import { describe, expect, it } from "vitest";
import * as errors from "../../lambda/errors.ts";
import { toErrorResponse } from "../../lambda/http/error-response.ts";
import { METRIC_NAMES } from "../../lambda/metrics.ts";
import { RetriesExhaustedError } from "../../lambda/retry/standard-retry.ts";
import { DynamoDbError, TransientDynamoDbError } from "../../lambda/store/dynamodb-client.ts";
import { NoAnswerError } from "../../lambda/transport/http-request.ts";

const failures: errors.ApiError[] = [
  new errors.BadRequestError("the body is required"),
  new errors.PayloadTooLargeError("too large"),
  new errors.UnsupportedMediaTypeError("not JSON"),
  new errors.InvalidRequestError("two Authorization headers"),
  new errors.MissingCredentialsError("no token"),
  new errors.InvalidTokenError("the token has expired"),
  new errors.InsufficientScopeError("plants/write"),
  new errors.PlantConflictError("a plant with id 1 already exists"),
  new errors.RouteNotFoundError("not found: this API serves POST /plants"),
  new errors.DependencyUnavailableError("unavailable", 1),
  new errors.StoreUnavailableError("not-written", 1),
  new errors.StoreUnavailableError("unknown", 1),
  new errors.IssuerUnavailableError("the key set is unavailable", 5),
  new errors.UnknownSigningKeyError("the token is invalid: unknown signing key"),
  new errors.UnknownSigningKeyHeldError("the token names a key not among the issuer's keys", 5),
];

describe("the table of failures", () => {
  it("has an example of every failure class errors.ts exports", () => {
    const classes = Object.values(errors).filter(
      (value) => typeof value === "function" && value.prototype instanceof errors.ApiError,
    );
    expect(classes.length).toBeGreaterThan(0);
    for (const failureClass of classes) {
      expect(failures.some((failure) => failure.constructor === failureClass)).toBe(true);
    }
  });

  it.each(failures.map((failure) => [failure.constructor.name, failure] as const))(
    "%s names itself and is answered with its declared status, kind and metric",
    (className, failure) => {
      expect(failure.name).toBe(className);
      const { response, kind, metric } = toErrorResponse(failure, "request-1");
      expect(response.status).toBe(failure.status);
      expect(response.body).toEqual({ error: failure.status, message: failure.message });
      expect(kind).toBe(failure.kind);
      expect(metric).toBe(failure.metric);
      if (metric !== undefined) expect(METRIC_NAMES).toContain(metric);
    },
  );

  it("answers anything else as a bug: 500, counted as Fault, nothing of the error in the answer", () => {
    const { response, kind, metric } = toErrorResponse(new TypeError("x is undefined"), "request-1");
    expect(response).toEqual({
      status: 500,
      body: { error: 500, message: "internal error; request id request-1" },
    });
    expect(kind).toBe("internal_error");
    expect(metric).toBe("Fault");
  });

  it("names the internal failures a 500's log line shows", () => {
    expect(String(new DynamoDbError("ValidationException", 400, {}))).toMatch(/^DynamoDbError: /);
    expect(String(new TransientDynamoDbError("GetItem failed"))).toMatch(/^TransientDynamoDbError: /);
    expect(String(new RetriesExhaustedError(3, "attempts exhausted"))).toMatch(/^RetriesExhaustedError: /);
    expect(String(new NoAnswerError(true, new Error("socket hang up")))).toBe(
      "NoAnswerError: Error: socket hang up",
    );
  });
});
