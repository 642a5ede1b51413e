/**
 * The local run's CORS settings and answers (local/cors.ts), as API Gateway's HTTP API gives them; and
 * its log, which says what a browser hides from its page when it refuses an origin ("Failed to fetch").
 */

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CORS_ALLOW_HEADERS, CORS_EXPOSE_HEADERS, CORS_MAX_AGE_SECONDS } from "../../infra/cors.ts";
import { ROUTES } from "../../lambda/http/routes.ts";
import { corsAllowOriginsFrom, corsAnswerHeaders, preflightResult } from "../../local/cors.ts";
import { type LocalApi, startLocalApi } from "../../local/local-api.ts";
import { mintLocalToken } from "../../local/local-issuer.ts";
import { tempDataDir } from "../support/local-run.ts";
import { rawRequest } from "../support/raw-http.ts";

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

  it("answers a preflight from an allowed origin with the methods, headers and max age of infra/cors.ts", () => {
    expect(preflightResult("http://localhost:5173", allowed)).toEqual({
      statusCode: 204,
      headers: {
        "access-control-allow-origin": "http://localhost:5173",
        "access-control-allow-methods": [...new Set(ROUTES.map(({ method }) => method))].join(","),
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

describe("the local run's log, for a browser on an origin it refuses", () => {
  const ALLOWED = "http://127.0.0.1:8081";
  let api: LocalApi;
  let dataDir: string;
  const lines: string[] = [];

  beforeAll(async () => {
    dataDir = await tempDataDir();
    api = await startLocalApi({
      port: 0,
      dataDir,
      corsAllowOrigins: [ALLOWED],
      log: (line) => lines.push(line),
    });
  });

  afterAll(async () => {
    await api?.close();
  });

  /**
   * The lines the local run logged while `exchange` ran (each is logged once its answer is written), but
   * the handler's own fetch of the key set, whose time is the cold start's.
   */
  async function loggedDuring(exchange: () => Promise<unknown>): Promise<string[]> {
    const from = lines.length;
    await exchange();
    return withoutKeySetFetch(lines.slice(from));
  }

  const preflight = (origin: string) =>
    rawRequest(`${api.url}/plants`, {
      method: "OPTIONS",
      headers: {
        origin,
        "access-control-request-method": "POST",
        "access-control-request-headers": "authorization,content-type",
      },
    });

  it("names the refused origin and the allowed ones on the preflight's line, and the localhost/127.0.0.1 mix-up", async () => {
    const logged = await loggedDuring(async () => {
      const answer = await preflight("http://localhost:8081");
      expect(answer.status).toBe(204);
      expect(answer.headers["access-control-allow-origin"]).toBeUndefined();
    });
    expect(logged).toEqual([
      expect.stringMatching(
        /^OPTIONS \/plants 204 \d+ms: browser origin http:\/\/localhost:8081 refused: PLANTS_CORS_ALLOW_ORIGINS allows http:\/\/127\.0\.0\.1:8081 \(localhost and 127\.0\.0\.1 are different origins to a browser\)$/,
      ),
    ]);
  });

  it("adds a line beside the function's own for a request the browser sent anyway", async () => {
    const token = await mintLocalToken(dataDir);
    const logged = await loggedDuring(() =>
      rawRequest(`${api.url}/plants`, {
        headers: {
          origin: "https://evil.example",
          authorization: `Bearer ${token}`,
          "content-type": "application/json",
        },
        body: '{"id":1,"name":"Fern"}',
      }),
    );
    expect(logged).toEqual([
      "POST /plants: browser origin https://evil.example refused: PLANTS_CORS_ALLOW_ORIGINS allows http://127.0.0.1:8081",
    ]);
  });

  it("logs nothing more for the allowed origin, or for a caller that is not a browser", async () => {
    const logged = await loggedDuring(async () => {
      expect((await preflight(ALLOWED)).headers["access-control-allow-origin"]).toBe(ALLOWED);
      await rawRequest(`${api.url}/nowhere`, { method: "GET" });
    });
    expect(logged).toEqual([
      expect.stringMatching(/^OPTIONS \/plants 204 \d+ms$/),
      expect.stringMatching(/^GET \/nowhere 404 \d+ms$/),
    ]);
  });

  it("says CORS is off, and how to allow the origin, when PLANTS_CORS_ALLOW_ORIGINS is unset", async () => {
    const offLines: string[] = [];
    const off = await startLocalApi({
      port: 0,
      dataDir: await tempDataDir(),
      log: (line) => offLines.push(line),
    });
    try {
      const answer = await rawRequest(`${off.url}/plants`, {
        method: "OPTIONS",
        headers: { origin: ALLOWED, "access-control-request-method": "POST" },
      });
      expect(answer.status).toBe(404);
    } finally {
      await off.close();
    }
    expect(withoutKeySetFetch(offLines)).toEqual([
      expect.stringMatching(
        /^OPTIONS \/plants 404 \d+ms: browser origin http:\/\/127\.0\.0\.1:8081 refused: CORS is off \(PLANTS_CORS_ALLOW_ORIGINS=http:\/\/127\.0\.0\.1:8081 allows it\)$/,
      ),
    ]);
  });
});

function withoutKeySetFetch(lines: string[]): string[] {
  return lines.filter((line) => !line.startsWith("GET /.well-known/jwks.json "));
}
