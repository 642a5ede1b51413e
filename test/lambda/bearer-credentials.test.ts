import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bearerToken } from "../../lambda/auth/bearer-credentials.ts";
import { apiGatewayEvent } from "../../support/events.ts";
import { type Harness, startHarness } from "../../support/harness.ts";
import { expectBearerChallenge, expectErrorAnswer } from "../support/answers.ts";
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

describe("through the handler: the challenge of each, and no token echoed", () => {
  let harness: Harness;
  let good: string;
  beforeAll(async () => {
    harness = await startHarness();
    good = await harness.issuer.mint();
  });
  afterAll(() => harness.close());
  const send = (version: "1.0" | "2.0", authorization: string | readonly string[]) => {
    const event = apiGatewayEvent(version, {
      withoutHeaders: ["authorization"],
      body: '{"id":1,"name":"Fern"}',
    });
    if (Array.isArray(authorization) && "multiValueHeaders" in event) {
      event.multiValueHeaders = { ...event.multiValueHeaders, Authorization: [...authorization] };
    } else event.headers = { ...event.headers, Authorization: String(authorization) };
    return harness.handler(event);
  };

  it("RFC 6750 §2.1 credentials are accepted: the scheme in any case, one or more spaces", async () => {
    for (const value of [`Bearer ${good}`, `bearer ${good}`, `BEARER   ${good}`]) {
      expect((await send("2.0", value)).statusCode).toBe(200);
    }
  });

  it("two credentials, in one value or two (payload 1.0), or a Bearer not followed by one token: 400", async () => {
    for (const [version, value] of [
      ["2.0", `Bearer ${good}, Bearer ${good}`],
      ["2.0", `Bearer "${good}"`],
      ["1.0", [`Bearer ${good}`, `Bearer ${good}`]],
    ] as const) {
      const result = await send(version, value);
      expectErrorAnswer(result, 400);
      expectBearerChallenge(result, "invalid_request");
      expect(result.body).not.toContain(good);
    }
  });

  it("another scheme, or a token with no scheme: 401 with a bare challenge", async () => {
    for (const value of ["Basic dXNlcjpwYXNz", good]) {
      const result = await send("2.0", value);
      expectErrorAnswer(result, 401);
      expect(result.headers["www-authenticate"]).toBe('Bearer realm="plants"');
    }
  });
});
