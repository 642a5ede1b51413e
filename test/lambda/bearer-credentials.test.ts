import { describe, expect, it } from "vitest";
import { bearerToken } from "../../lambda/auth/bearer-credentials.ts";
import { InvalidRequestError, MissingCredentialsError } from "../../lambda/errors.ts";

describe("the Authorization header's Bearer credentials", () => {
  it("takes the token with optional whitespace around the value", () => {
    expect(bearerToken(" \tBearer abc.def-ghi \t")).toBe("abc.def-ghi");
    expect(bearerToken("bearer   abc")).toBe("abc");
  });

  it("refuses a malformed Bearer value as invalid_request, and another scheme as no credentials", () => {
    expect(() => bearerToken("Bearer\tabc")).toThrow(InvalidRequestError);
    expect(() => bearerToken("Bearer a,Bearer b")).toThrow(InvalidRequestError);
    expect(() => bearerToken("Basic dXNlcjpwYXNz")).toThrow(MissingCredentialsError);
    expect(() => bearerToken("  ")).toThrow(MissingCredentialsError);
  });

  // Trimming with /[ \t]+$/ retries at every space of a run: over a minute on these 250,000 spaces, past the
  // runner's 30 s timeout. A linear trim answers in milliseconds.
  it("reads a header of 250,000 spaces in time that grows with its length, not its square", () => {
    const spaces = " ".repeat(250_000);
    expect(() => bearerToken(`Bearer${spaces}x${spaces}y`)).toThrow(InvalidRequestError);
    expect(bearerToken(`Bearer${spaces}token${spaces}`)).toBe("token");
  });
});
