import { describe, expect, it } from "vitest";
import { handlerEnvironment } from "../../local/handler-environment.ts";

const EMBEDDED = { endpoint: "http://127.0.0.1:1", embedded: true, tableName: "plants" };

describe("the environment the local run gives the bundled handler", () => {
  it("passes the function's store settings on when the user sets them, and only then", () => {
    const set = handlerEnvironment(EMBEDDED, "http://127.0.0.1:2/jwks", {
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
    const unset = handlerEnvironment(EMBEDDED, "http://127.0.0.1:2/jwks", { STORE_MAX_ATTEMPTS: " " });
    expect(Object.keys(unset).filter((name) => name.startsWith("STORE_"))).toEqual([]);
  });
});
