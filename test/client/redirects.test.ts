/**
 * Redirects are never followed, against real HTTP servers on 127.0.0.1 (one the client is given, another
 * that a redirect points to, reached as `localhost`: another host): a redirect loop is one POST, not 63;
 * a plant is never re-POSTed to the host a redirect names; a token is only taken from the token URL
 * itself, even through a fetch of the caller's that follows redirects.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createPlantStoreClient,
  type FetchFunction,
  PlantStoreError,
  TokenEndpointError,
} from "../../client/index.ts";
import { failureOf } from "./fakes.ts";

/** An HTTP server answering with `route`, recording every request it gets as "<method> <path>". */
async function recordingServer(route: (request: IncomingMessage, response: ServerResponse) => void) {
  const requests: string[] = [];
  const server = createServer((request, response) => {
    request.resume();
    request.on("end", () => {
      requests.push(`${request.method} ${request.url}`);
      route(request, response);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return { requests, port, close: () => new Promise((resolve) => server.close(resolve)) };
}

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
    response.writeHead(404).end();
  });
  apiUrl = `http://127.0.0.1:${api.port}`;
});

afterAll(async () => {
  await api?.close();
  await elsewhere?.close();
});

/** A client of `<api>/loop`, its tokens from `tokenPath`, sending through `fetch` (else the runtime's). */
function clientWith(tokenPath: string, fetch?: FetchFunction) {
  const credentials = { clientId: "id", clientSecret: "secret-1", tokenUrl: `${apiUrl}${tokenPath}` };
  const retry = { maxAttempts: 3, attemptTimeoutMs: 30_000, deadlineMs: 60_000 };
  // Waits of 0: the test never races a timer.
  return createPlantStoreClient({ baseUrl: `${apiUrl}/loop`, credentials, fetch, random: () => 0, retry });
}

describe("a redirect is never followed", () => {
  it("a redirect loop is one POST, thrown as a redirect naming where it led", async () => {
    const error = await failureOf(clientWith("/oauth2/token").createPlant({ id: 1n, name: "Fern" }));
    expect(error).toBeInstanceOf(PlantStoreError);
    expect(error).toMatchObject({ kind: "redirect", status: 307, attempts: 1 });
    expect(error.message).toBe(
      `POST ${apiUrl}/loop/plants answered 307, a redirect to /loop/plants, which the client never follows: set baseUrl to the URL that answers itself`,
    );
    expect(api.requests.filter((request) => request === "POST /loop/plants")).toHaveLength(1);
  });

  const following: FetchFunction = (url, init) => globalThis.fetch(url, { ...init, redirect: "follow" });
  it.each([
    ["the runtime's fetch", undefined, []],
    ["a fetch of the caller's that follows redirects", following, ["POST /oauth2/token"]],
  ])(
    "a token is taken only from the token URL itself, even through %s: a TokenEndpointError, nothing posted",
    async (_case, fetch, followed) => {
      const [before, tokenUrl] = [api.requests.length, `${apiUrl}/oauth2/token-moved`];
      elsewhere.requests.length = 0;
      const error = await failureOf(
        clientWith("/oauth2/token-moved", fetch).createPlant({ id: 4n, name: "Fern" }),
      );
      // The runtime's fetch gives the 307 and its Location; one that follows it, only that it was redirected.
      const [status, what] = fetch
        ? [undefined, "was redirected"]
        : [307, `answered 307, a redirect to ${elsewhereUrl}/oauth2/token`];
      expect(error).toBeInstanceOf(TokenEndpointError);
      expect(error).toMatchObject({ kind: "redirect", status, tokenUrl });
      expect(error.message).toBe(
        `token endpoint ${tokenUrl} ${what}, which the client never follows: set credentials.tokenUrl to the URL that answers itself`,
      );
      // A fetch of the caller's went there; the client used nothing it answered, and posted nothing.
      expect(elsewhere.requests).toEqual(followed);
      expect(api.requests.slice(before)).toEqual(["POST /oauth2/token-moved"]);
    },
  );
});
