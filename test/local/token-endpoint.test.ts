/**
 * The local run's POST /oauth2/token (local/oauth-token-endpoint.ts) over real HTTP, on what a client or
 * a probe may send that fetch() would not: repeated headers, repeated scopes, a body far over the limit,
 * a request whose sender half-closes after it.
 */
import { Agent } from "node:http";
import { decodeJwt } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type LocalApi, startLocalApi } from "../../local/local-api.ts";
import { tempDataDir } from "../support/local-run.ts";
import { rawExchange, rawRequest } from "../support/raw-http.ts";

const FORM = "application/x-www-form-urlencoded";
const GRANT = "grant_type=client_credentials";

let api: LocalApi;
const lines: string[] = [];

beforeAll(async () => {
  api = await startLocalApi({ port: 0, dataDir: await tempDataDir(), log: (line) => lines.push(line) });
});

afterAll(async () => {
  await api?.close();
});

const encoded = () => Buffer.from(`${api.client.clientId}:${api.client.clientSecret}`).toString("base64");

function tokenRequest(headers: Record<string, string | string[]>, body = GRANT) {
  return rawRequest(api.client.tokenUrl, { headers: { "content-type": FORM, ...headers }, body });
}

async function expectOAuthError(
  answer: Promise<{ status: number; body: string }>,
  status: number,
  error: string,
) {
  const { status: answered, body } = await answer;
  expect({ status: answered, body: JSON.parse(body) }).toEqual({ status, body: { error } });
}

describe("headers, as strict as /plants", () => {
  it("gives a token for one well-formed Basic header, the scheme's name in any case", async () => {
    for (const scheme of ["Basic", "basic", "BASIC"]) {
      const answer = await tokenRequest({ authorization: `${scheme} ${encoded()}` });
      expect(answer.status, scheme).toBe(200);
    }
  });

  it("refuses two Authorization headers, even two good ones: 400 invalid_request", async () => {
    const good = `Basic ${encoded()}`;
    await expectOAuthError(tokenRequest({ authorization: [good, good] }), 400, "invalid_request");
    await expectOAuthError(tokenRequest({ authorization: [good, "Basic eDp5"] }), 400, "invalid_request");
  });

  it("refuses two Content-Type headers: 400 invalid_request", async () => {
    await expectOAuthError(
      tokenRequest({ authorization: `Basic ${encoded()}`, "content-type": [FORM, FORM] }),
      400,
      "invalid_request",
    );
  });
});

describe("scopes, a set (RFC 6749 §3.3)", () => {
  it("grants a scope asked twice once", async () => {
    const answer = await tokenRequest(
      { authorization: `Basic ${encoded()}` },
      `${GRANT}&scope=${encodeURIComponent("plants/write plants/write")}`,
    );
    expect(answer.status).toBe(200);
    const { access_token } = JSON.parse(answer.body) as { access_token: string };
    expect(decodeJwt(access_token).scope).toBe("plants/write");
  });

  it.each(["plants/write  plants/write", " plants/write", "plants/write\tplants/write"])(
    "refuses the malformed scope value %j: 400 invalid_scope",
    async (scope) => {
      await expectOAuthError(
        tokenRequest({ authorization: `Basic ${encoded()}` }, `${GRANT}&scope=${encodeURIComponent(scope)}`),
        400,
        "invalid_scope",
      );
    },
  );
});

describe("bodies that do not end well", () => {
  it("reads a 20 MB body to its end, then answers 400 invalid_request, and the connection lives on", async () => {
    // One connection for both requests: an answer given before the body was read would have to close it
    // (and a client still sending would get a reset instead of the answer).
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      const headers = { "content-type": FORM, authorization: `Basic ${encoded()}` };
      const body = `${GRANT}&pad=${"x".repeat(20 * 1024 * 1024)}`;
      await expectOAuthError(
        rawRequest(api.client.tokenUrl, { agent, headers, body, pieces: 64 }),
        400,
        "invalid_request",
      );
      const next = await rawRequest(api.client.tokenUrl, { agent, headers, body: GRANT });
      expect(next).toMatchObject({ status: 200, reusedSocket: true });
    } finally {
      agent.destroy();
    }
  });

  it("answers a whole request whose sender half-closes after it, as API Gateway does", async () => {
    // `nc -N` and other scripted clients send the request, then close their side and wait for the answer.
    const granted = await fetch(api.client.tokenUrl, {
      method: "POST",
      headers: { "content-type": FORM, authorization: `Basic ${encoded()}` },
      body: GRANT,
    });
    const { access_token: token } = (await granted.json()) as { access_token: string };
    const { port } = new URL(api.url);
    const body = '{"id":7,"name":"Fern"}';
    const received = await rawExchange(
      Number(port),
      "POST /plants HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n" +
        `Authorization: Bearer ${token}\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
    );
    const [head = "", answer = ""] = received.split("\r\n\r\n");
    expect(head).toMatch(/^HTTP\/1\.1 200 /);
    expect(JSON.parse(answer)).toEqual({ name: "Fern" });
  });
});
