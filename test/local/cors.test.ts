/** The local run's CORS settings and answers (local/cors.ts), as API Gateway's HTTP API gives them. */
import { describe, expect, it } from "vitest";
import { CORS_ALLOW_HEADERS, CORS_EXPOSE_HEADERS, CORS_MAX_AGE_SECONDS } from "../../lambda/http/cors.ts";
import { corsAllowOriginsFrom, corsAnswerHeaders, preflightResult } from "../../local/cors.ts";

describe("PLANTS_CORS_ALLOW_ORIGINS", () => {
  it("is off when unset or blank, and a list of origins or * otherwise", () => {
    expect(corsAllowOriginsFrom(undefined)).toBeUndefined();
    expect(corsAllowOriginsFrom(" ")).toBeUndefined();
    expect(corsAllowOriginsFrom("http://localhost:5173, https://app.example.com")).toEqual([
      "http://localhost:5173",
      "https://app.example.com",
    ]);
    expect(corsAllowOriginsFrom("*")).toEqual(["*"]);
  });

  it.each(["https://app.example.com/", "app.example.com", "https://App.example.com", "ftp://x.example"])(
    "refuses %s, which a browser's Origin never equals",
    (entry) => {
      expect(() => corsAllowOriginsFrom(entry)).toThrow(
        `PLANTS_CORS_ALLOW_ORIGINS entry '${entry}' is not an origin`,
      );
    },
  );
});

describe("answers", () => {
  const allowed = ["http://localhost:5173"];

  it("answers a preflight from an allowed origin with the methods, headers and max age of lambda/http/cors.ts", () => {
    expect(preflightResult("http://localhost:5173", allowed)).toEqual({
      statusCode: 204,
      headers: {
        "access-control-allow-origin": "http://localhost:5173",
        "access-control-allow-methods": "POST",
        "access-control-allow-headers": CORS_ALLOW_HEADERS.join(","),
        "access-control-max-age": String(CORS_MAX_AGE_SECONDS),
        vary: "origin",
      },
    });
  });

  it("answers a preflight from another origin 204 without CORS headers, which the browser takes as a refusal", () => {
    expect(preflightResult("http://evil.example", allowed)).toEqual({ statusCode: 204, headers: {} });
    expect(preflightResult(undefined, allowed)).toEqual({ statusCode: 204, headers: {} });
  });

  it("lets an allowed origin read the answer and its exposed headers; * allows every origin", () => {
    expect(corsAnswerHeaders("http://localhost:5173", allowed)).toEqual({
      "access-control-allow-origin": "http://localhost:5173",
      "access-control-expose-headers": CORS_EXPOSE_HEADERS.join(","),
      vary: "origin",
    });
    expect(corsAnswerHeaders("http://evil.example", allowed)).toEqual({});
    expect(corsAnswerHeaders("http://evil.example", ["*"])).toEqual({
      "access-control-allow-origin": "*",
      "access-control-expose-headers": CORS_EXPOSE_HEADERS.join(","),
    });
  });
});
