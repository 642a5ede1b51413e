/**
 * Redirects are never followed, against real HTTP servers on 127.0.0.1 (one the client is given, another
 * that a redirect points to, reached as `localhost`: another host): a redirect loop is one POST, not 63;
 * a plant is never re-POSTed to the host a redirect names; a token is only taken from the token URL
 * itself, even through a fetch of the caller's that follows redirects.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type ClientCredentials,
  createPlantStoreClient,
  type PlantStoreClientOptions,
  PlantStoreError,
  TokenEndpointError,
} from "../../client/index.ts";
import { failureOf } from "./fakes.ts";

interface Recorded {
  method: string;
  url: string;
  authorization: string | undefined;
}

/** An HTTP server answering with `route`, recording every request it gets. */
async function recordingServer(route: (request: IncomingMessage, response: ServerResponse) => void) {
  const requests: Recorded[] = [];
  const server: Server = createServer((request, response) => {
    request.resume();
    request.on("end", () => {
      requests.push({
        method: request.method ?? "",
        url: request.url ?? "",
        authorization: request.headers.authorization,
      });
      route(request, response);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return { server, requests, port, close: () => new Promise((resolve) => server.close(resolve)) };
}

const SECRET = "SecretCanary-redirect-0123456789";
const json = (response: ServerResponse, status: number, body: unknown) =>
  response.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));

let api: Awaited<ReturnType<typeof recordingServer>>;
/** Another host: what the redirects point to. It would answer anything, a plant or a token. */
let elsewhere: Awaited<ReturnType<typeof recordingServer>>;
let apiUrl: string;
let elsewhereUrl: string;

beforeAll(async () => {
  elsewhere = await recordingServer((request, response) =>
    request.url?.startsWith("/oauth2/token")
      ? json(response, 200, { access_token: "token-from-elsewhere", token_type: "Bearer", expires_in: 3600 })
      : json(response, 200, { name: "Fern" }),
  );
  elsewhereUrl = `http://localhost:${elsewhere.port}`;
  api = await recordingServer((request, response) => {
    const path = request.url ?? "";
    const redirect = (status: number, location: string) => response.writeHead(status, { location }).end();
    if (path === "/oauth2/token")
      return json(response, 200, { access_token: "token-1", token_type: "Bearer", expires_in: 3600 });
    if (path === "/oauth2/token-moved") return redirect(307, `${elsewhereUrl}/oauth2/token`);
    if (path === "/loop/plants") return redirect(307, "/loop/plants");
    if (path === "/moved/plants") return redirect(308, `${elsewhereUrl}/plants`);
    response.writeHead(404).end();
  });
  apiUrl = `http://127.0.0.1:${api.port}`;
});

afterAll(async () => {
  await api?.close();
  await elsewhere?.close();
});

function clientAt(path: string, options: Partial<PlantStoreClientOptions> = {}, tokenPath = "/oauth2/token") {
  const credentials: ClientCredentials = {
    clientId: "id",
    clientSecret: SECRET,
    tokenUrl: `${apiUrl}${tokenPath}`,
  };
  return createPlantStoreClient({
    baseUrl: `${apiUrl}${path}`,
    credentials,
    // Waits of 0: the test never races a timer.
    random: () => 0,
    retry: { maxAttempts: 3, attemptTimeoutMs: 30_000, deadlineMs: 60_000 },
    ...options,
  });
}

const postsTo = (server: typeof api, path: string) =>
  server.requests.filter((request) => request.method === "POST" && request.url === path).length;

describe("a redirect is never followed", () => {
  it("a redirect loop is one POST, thrown as a redirect naming where it led", async () => {
    const error = await failureOf(clientAt("/loop").createPlant({ id: 1n, name: "Fern" }));
    expect(error).toBeInstanceOf(PlantStoreError);
    expect(error).toMatchObject({ kind: "redirect", status: 307, attempts: 1 });
    expect(error.message).toBe(
      `POST ${apiUrl}/loop/plants answered 307, a redirect to /loop/plants, which the client never follows: set baseUrl to the URL that answers itself`,
    );
    expect(postsTo(api, "/loop/plants")).toBe(1);
  });

  it("a token is taken only from the token URL itself: a redirected token request is a TokenEndpointError, and nothing is posted", async () => {
    const before = api.requests.length;
    const error = await failureOf(
      clientAt("/loop", {}, "/oauth2/token-moved").createPlant({ id: 4n, name: "Fern" }),
    );
    expect(error).toBeInstanceOf(TokenEndpointError);
    expect(error).toMatchObject({ kind: "redirect", status: 307, tokenUrl: `${apiUrl}/oauth2/token-moved` });
    expect(error.message).toContain("set credentials.tokenUrl to the URL that answers itself");
    expect(api.requests.slice(before).map((request) => request.url)).toEqual(["/oauth2/token-moved"]);
    expect(elsewhere.requests).toEqual([]);
  });

  it("even a fetch of the caller's that follows redirects gets no token from elsewhere used", async () => {
    const following = (url: string, init: RequestInit) =>
      globalThis.fetch(url, { ...init, redirect: "follow" });
    const before = api.requests.length;
    const error = await failureOf(
      clientAt("/loop", { fetch: following }, "/oauth2/token-moved").createPlant({ id: 5n, name: "Fern" }),
    );
    expect(error).toBeInstanceOf(TokenEndpointError);
    expect(error).toMatchObject({ kind: "redirect", status: undefined });
    expect(error.message).toBe(
      `token endpoint ${apiUrl}/oauth2/token-moved was redirected, which the client never follows: set credentials.tokenUrl to the URL that answers itself`,
    );
    // The caller's fetch went there; the client used nothing it answered.
    expect(elsewhere.requests.map((request) => request.url)).toEqual(["/oauth2/token"]);
    expect(
      api.requests.slice(before).some((request) => request.authorization?.includes("token-from-elsewhere")),
    ).toBe(false);
    elsewhere.requests.length = 0;
  });
});
