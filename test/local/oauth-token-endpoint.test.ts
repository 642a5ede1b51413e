/**
 * The local run's token endpoint (local/oauth-token-endpoint.ts) against `npm start` as a real child
 * process: it answers the client-credentials grant as Cognito does, for the app client `npm start` keeps
 * in <data dir>/client.json. (The client's own tests against it are in test/client/local-run.test.ts.)
 */
import { readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningServer, startServer, tempDataDir } from "../support/local-run.ts";

let server: RunningServer;
let dataDir: string;
let local: { baseUrl: string; clientId: string; clientSecret: string; tokenUrl: string };

beforeAll(async () => {
  dataDir = await tempDataDir();
  server = await startServer({ PLANTS_DATA_DIR: dataDir });
  local = JSON.parse(await readFile(join(dataDir, "client.json"), "utf8"));
});

afterAll(async () => {
  await server?.stop();
});

describe("POST /oauth2/token answers like Cognito", () => {
  const basic = (id: string, secret: string) => `Basic ${Buffer.from(`${id}:${secret}`).toString("base64")}`;
  const FORM = "application/x-www-form-urlencoded";

  function tokenRequest(body: string, headers: Record<string, string> = {}) {
    return fetch(local.tokenUrl, {
      method: "POST",
      headers: { authorization: basic(local.clientId, local.clientSecret), "content-type": FORM, ...headers },
      body,
    });
  }

  it("gives a Bearer token with scope plants/write for an hour, which the API accepts", async () => {
    for (const body of [
      "grant_type=client_credentials",
      "grant_type=client_credentials&scope=plants%2Fwrite",
    ]) {
      const response = await tokenRequest(body);
      expect(response.status).toBe(200);
      expect(response.headers.get("cache-control")).toBe("no-store");
      const answer = (await response.json()) as {
        access_token: string;
        expires_in: number;
        token_type: string;
      };
      expect(answer).toEqual({ access_token: expect.any(String), expires_in: 3600, token_type: "Bearer" });
      const created = await fetch(`${server.url}/plants`, {
        method: "POST",
        headers: { authorization: `Bearer ${answer.access_token}`, "content-type": "application/json" },
        body: '{"id":6001,"name":"Fern"}',
      });
      expect(created.status).toBe(200);
    }
  });

  it.each([
    ["no grant_type", "scope=plants%2Fwrite", {}, 400, "invalid_request"],
    ["another grant", "grant_type=password&username=a&password=b", {}, 400, "unsupported_grant_type"],
    [
      "a scope the client lacks",
      "grant_type=client_credentials&scope=plants%2Fadmin",
      {},
      400,
      "invalid_scope",
    ],
    [
      "a JSON body",
      '{"grant_type":"client_credentials"}',
      { "content-type": "application/json" },
      400,
      "invalid_request",
    ],
    ["no Authorization", "grant_type=client_credentials", { authorization: "" }, 401, "invalid_client"],
    [
      "another client id",
      "grant_type=client_credentials",
      { authorization: basic("someone", "x") },
      401,
      "invalid_client",
    ],
    [
      "a parameter sent twice (RFC 6749 §3.2)",
      "grant_type=client_credentials&scope=plants%2Fwrite&scope=admin",
      {},
      400,
      "invalid_request",
    ],
    [
      "grant_type sent twice",
      "grant_type=client_credentials&grant_type=client_credentials",
      {},
      400,
      "invalid_request",
    ],
    [
      "Basic and client_secret in the body: two methods (RFC 6749 §2.3)",
      "grant_type=client_credentials&client_id=plant-store-local&client_secret=x",
      {},
      400,
      "invalid_request",
    ],
    [
      "client_secret_post with a wrong secret",
      "grant_type=client_credentials&client_id=plant-store-local&client_secret=wrong",
      { authorization: "" },
      401,
      "invalid_client",
    ],
    [
      "a client_id in the body naming another client than Basic",
      "grant_type=client_credentials&client_id=someone",
      {},
      401,
      "invalid_client",
    ],
    [
      "a body over 16 KiB",
      `grant_type=client_credentials&pad=${"x".repeat(16 * 1024)}`,
      {},
      400,
      "invalid_request",
    ],
  ])("refuses %s: %i %s, an OAuth error body, never cached", async (_case, body, headers, status, error) => {
    const response = await tokenRequest(body, headers);
    expect(response.status).toBe(status);
    expect(await response.json()).toEqual({ error });
    expect(response.headers.get("cache-control")).toBe("no-store");
    // RFC 9110 §15.5.2 and RFC 6749 §5.2: a 401 challenges, with the scheme the client authenticates by.
    expect(response.headers.get("www-authenticate")).toBe(
      status === 401 ? 'Basic realm="oauth2/token", charset="UTF-8"' : null,
    );
  });

  it("takes client_secret_post, as Cognito does: the id and secret in the form body", async () => {
    const form = new URLSearchParams({
      grant_type: "client_credentials",
      client_id: local.clientId,
      client_secret: local.clientSecret,
    });
    const response = await tokenRequest(form.toString(), { authorization: "" });
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ token_type: "Bearer", expires_in: 3600 });
  });

  it("still answers API Gateway's 404 to anything but POST /plants and POST /oauth2/token", async () => {
    const response = await fetch(local.tokenUrl);
    expect(response.status).toBe(404);
    expect(await response.json()).toEqual({ message: "Not Found" });
  });
});

describe("<data dir>/client.json and the start banner", () => {
  it("keeps the app client privately (0600), with the base URL, and prints its id and token URL, never its secret", async () => {
    expect((await stat(join(dataDir, "client.json"))).mode & 0o777).toBe(0o600);
    expect(local).toEqual({
      baseUrl: server.url,
      clientId: "plant-store-local",
      clientSecret: expect.stringMatching(/^[0-9a-f]{64}$/),
      tokenUrl: `${server.url}/oauth2/token`,
    });
    expect(server.output()).toContain(`client: id ${local.clientId}; its secret is in `);
    expect(server.output()).not.toContain(local.clientSecret);
    expect(server.output()).toContain(`token URL ${local.tokenUrl}`);
  });
});
