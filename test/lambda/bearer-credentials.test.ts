import { describe, expect, it } from "vitest";
import { bearerToken } from "../../lambda/auth/bearer-credentials.ts";
import { growthRatio } from "../support/growth.ts";

const INVALID_REQUEST = expect.objectContaining({ code: "InvalidRequest", status: 400 });
const MISSING_CREDENTIALS = expect.objectContaining({ code: "MissingCredentials", status: 401 });

describe("the Authorization header's Bearer credentials", () => {
  it("takes the token with optional whitespace around the value", () => {
    expect(bearerToken(" \tBearer abc.def-ghi \t")).toBe("abc.def-ghi");
    expect(bearerToken("bearer   abc")).toBe("abc");
  });

  it("refuses a malformed Bearer value as invalid_request, and another scheme as no credentials", () => {
    expect(() => bearerToken("Bearer\tabc")).toThrow(INVALID_REQUEST);
    expect(() => bearerToken("Bearer a,Bearer b")).toThrow(INVALID_REQUEST);
    expect(() => bearerToken("Basic dXNlcjpwYXNz")).toThrow(MISSING_CREDENTIALS);
    expect(() => bearerToken("  ")).toThrow(MISSING_CREDENTIALS);
  });

  // Trimming with /[ \t]+$/ retries at every space of a run: 16 times the time for 4 times the spaces (over a
  // minute on 250,000 of them). A linear trim takes about 4 times.
  it("reads a header of many spaces in time that grows with its length, not its square", () => {
    const readPadded = (spaces: number) => {
      const padding = " ".repeat(spaces);
      expect(() => bearerToken(`Bearer${padding}x${padding}y`)).toThrow(INVALID_REQUEST);
      expect(bearerToken(`Bearer${padding}token${padding}`)).toBe("token");
    };
    expect(growthRatio(readPadded, 16_000)).toBeLessThan(8);
  });
});
