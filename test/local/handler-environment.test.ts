import { describe, expect, it } from "vitest";
import { handlerEnvironment } from "../../local/handler-environment.ts";
import { LOCAL_ISSUER } from "../../local/local-issuer.ts";
import { createTokenIssuer, generateSigningKey } from "../../local/token-issuer.ts";

const EMBEDDED = { endpoint: "http://127.0.0.1:1", embedded: true, tableName: "plants" };
const KEYS = {
  jwksUrl: "http://127.0.0.1:2/jwks",
  jwks: { keys: [{ kty: "RSA", kid: "k", n: "AQAB", e: "AQAB" }] },
};

describe("the environment the local run gives the bundled handler", () => {
  it("passes the function's store settings on when the user sets them, and only then", () => {
    const set = handlerEnvironment(EMBEDDED, KEYS, {
      STORE_DEADLINE_MS: " 25000 ",
      STORE_ATTEMPT_TIMEOUT_MS: "20000",
      STORE_MAX_ATTEMPTS: "5",
      JWT_AUDIENCE: "from the shell",
    });
    expect(set).toMatchObject({
      STORE_DEADLINE_MS: "25000",
      STORE_ATTEMPT_TIMEOUT_MS: "20000",
      STORE_MAX_ATTEMPTS: "5",
      JWT_AUDIENCE: "",
    });
    const unset = handlerEnvironment(EMBEDDED, KEYS, { STORE_MAX_ATTEMPTS: " " });
    expect(Object.keys(unset).filter((name) => name.startsWith("STORE_"))).toEqual([]);
  });

  it("delivers the local issuer's public key set in JWKS_JSON, as the stack delivers its issuer's", async () => {
    const issuer = await createTokenIssuer(LOCAL_ISSUER, await generateSigningKey());
    const set = handlerEnvironment(EMBEDDED, { jwksUrl: "http://127.0.0.1:2/jwks", jwks: issuer.jwks }, {});
    const delivered = JSON.parse(set.JWKS_JSON ?? "");
    expect(delivered).toEqual(issuer.jwks);
    expect(delivered.keys[0]).not.toHaveProperty("d");
    expect(set.JWKS_URL).toBe("http://127.0.0.1:2/jwks");
  });

  it("refuses to deliver a key set holding a private key", async () => {
    const privateKey = await generateSigningKey();
    expect(() =>
      handlerEnvironment(EMBEDDED, { jwksUrl: "http://127.0.0.1:2/jwks", jwks: { keys: [privateKey] } }, {}),
    ).toThrow(/publishes the private member "d"/);
  });
});
