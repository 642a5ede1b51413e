import { access } from "node:fs/promises";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { decodeJwt } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { matchRoute } from "../../lambda/http/routes.ts";
import { mintLocalToken } from "../../local/local-issuer.ts";
import { npmRun, type RunningServer, startServer, tempDataDir } from "../support/local-run.ts";

const JWT = /^[\w-]+\.[\w-]+\.[\w-]+$/;

describe("npm start: the deployable bundle behind a local API Gateway, on the embedded DynamoDB", () => {
  let dataDir: string;
  let server: RunningServer;
  let tokenFromBeforeRestart: string;

  beforeAll(async () => {
    dataDir = await tempDataDir();
    server = await startServer({ PLANTS_DATA_DIR: dataDir });
  });

  afterAll(async () => {
    await server?.stop();
  });

  function post(body: string, headers: Record<string, string> = {}, path = "/plants") {
    return fetch(`${server.url}${path}`, {
      method: "POST",
      headers: { "content-type": "application/json", ...headers },
      body,
    });
  }

  async function errorOf(response: Response) {
    expect(response.headers.get("content-type")).toBe("application/json");
    const body = (await response.json()) as { error: number; message: string };
    expect(body.error).toBe(response.status);
    return body;
  }

  const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

  it("answers the curl of the README with a token from `npm run --silent token`: 200 {name}", async () => {
    const { stdout } = await npmRun("token", [], { PLANTS_DATA_DIR: dataDir });
    expect(stdout).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+\n$/);
    tokenFromBeforeRestart = stdout.trim();
    const claims = decodeJwt(tokenFromBeforeRestart);
    expect(claims.scope).toBe("plants/write");
    expect(Number(claims.exp) - Number(claims.iat)).toBe(3600);

    const response = await post('{"id":1,"name":"Fern"}', bearer(tokenFromBeforeRestart));
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("application/json");
    expect(await response.text()).toBe('{"name":"Fern"}');
  });

  it("answers a replay of the same plant with 200, and another plant under its id with 409", async () => {
    const token = await mintLocalToken(dataDir);
    expect((await post('{"id":1,"name":"Fern"}', bearer(token))).status).toBe(200);
    const conflict = await post('{"id":1,"name":"Monstera"}', bearer(token));
    expect(conflict.status).toBe(409);
    await errorOf(conflict);
  });

  it("answers 400 naming the missing field", async () => {
    const response = await post('{"id":2}', bearer(await mintLocalToken(dataDir)));
    expect(response.status).toBe(400);
    expect((await errorOf(response)).message).toContain("name");
  });

  it("answers 401 with a Bearer challenge without a token", async () => {
    const response = await post('{"id":2,"name":"Ivy"}');
    expect(response.status).toBe(401);
    expect(response.headers.get("www-authenticate")).toMatch(/^Bearer /);
    await errorOf(response);
  });

  it("answers 403 to a token without the plants/write scope", async () => {
    const response = await post(
      '{"id":2,"name":"Ivy"}',
      bearer(await mintLocalToken(dataDir, { scope: "other" })),
    );
    expect(response.status).toBe(403);
    expect(response.headers.get("www-authenticate")).toContain("insufficient_scope");
  });

  it("answers 401 to an expired token from `npm run token -- --expires-in -60`", async () => {
    const { stdout } = await npmRun("token", ["--scope", "plants/write other", "--expires-in", "-60"], {
      PLANTS_DATA_DIR: dataDir,
    });
    const token = stdout.trim();
    expect(token).toMatch(JWT);
    expect(decodeJwt(token).scope).toBe("plants/write other");
    const response = await post('{"id":2,"name":"Ivy"}', bearer(token));
    expect(response.status).toBe(401);
    expect((await errorOf(response)).message).toContain("expired");
  });

  it.each([
    ["--scope --stack", "--scope needs a value"],
    ["--expires-in=", "--expires-in must be a whole number of seconds"],
    ["--expires-in 9007199254740991", "--expires-in must be a whole number of seconds"],
  ])("`npm run token -- %s` fails with one line saying why, and prints no token", async (line, why) => {
    const args = line.split(" ");
    const failure = await npmRun("token", args, { PLANTS_DATA_DIR: dataDir }).catch(
      (error: { code?: number; stdout?: string; stderr?: string }) => error,
    );
    expect(failure).toMatchObject({ code: 1, stdout: "" });
    expect((failure as { stderr: string }).stderr.split("\n")[0]).toContain(why);
  });

  it("answers 413 to a body over 16 KiB and 415 to a body that is not JSON", async () => {
    const token = await mintLocalToken(dataDir);
    const large = await post(JSON.stringify({ id: 3, name: "x".repeat(20_000) }), bearer(token));
    expect(large.status).toBe(413);
    await errorOf(large);
    const text = await post("id=3&name=Ivy", { ...bearer(token), "content-type": "text/plain" });
    expect(text.status).toBe(415);
    await errorOf(text);
  });

  it("answers API Gateway's own 500 to a request too large for Lambda to run, as AWS does, and stores nothing", async () => {
    const token = await mintLocalToken(dataDir);
    // 5 MB of JSON reaches the function, which answers 413; 7 MB is over Lambda's 6 MB invoke payload.
    const underInvokeLimit = await post(
      JSON.stringify({ id: 31, name: "x".repeat(5_000_000) }),
      bearer(token),
    );
    expect(underInvokeLimit.status).toBe(413);
    await errorOf(underInvokeLimit);
    const overInvokeLimit = await post(
      JSON.stringify({ id: 31, name: "x".repeat(7_000_000) }),
      bearer(token),
    );
    expect(overInvokeLimit.status).toBe(500);
    expect(await overInvokeLimit.json()).toEqual({ message: "Internal Server Error" });
    const afterwards = await post(JSON.stringify({ id: 31, name: "Fern" }), bearer(token));
    expect(afterwards.status).toBe(200);
  });

  it("answers 415 naming a Content-Encoding it cannot read, and stores nothing", async () => {
    const token = await mintLocalToken(dataDir);
    const response = await fetch(`${server.url}/plants`, {
      method: "POST",
      headers: { ...bearer(token), "content-type": "application/json", "content-encoding": "gzip" },
      body: gzipSync(JSON.stringify({ id: 6, name: "Moss" })),
    });
    expect(response.status).toBe(415);
    expect((await errorOf(response)).message).toBe(
      "the Content-Encoding 'gzip' is not supported; send the body uncompressed",
    );
    const plain = await post(JSON.stringify({ id: 6, name: "Ivy" }), bearer(token));
    expect(plain.status).toBe(200);
  });

  it("answers API Gateway's own 404 to every method and path of no route in lambda/http/routes.ts", async () => {
    const token = bearer(await mintLocalToken(dataDir));
    const candidates: [string, string][] = [
      ["GET", "/plants"],
      ["PUT", "/plants"],
      ["DELETE", "/plants"],
      ["OPTIONS", "/plants"],
      ["GET", "/plants/1"],
      ["POST", "/plants/"],
      ["POST", "/Plants"],
      ["POST", "/other"],
      ["GET", "/"],
    ];
    const offRoute = candidates
      .filter(([method, path]) => matchRoute(method, path) === undefined)
      .map(([method, path]) =>
        fetch(`${server.url}${path}`, {
          method,
          headers: { ...token, "content-type": "application/json" },
          ...(method === "GET" || method === "OPTIONS" ? {} : { body: '{"id":5,"name":"Ivy"}' }),
        }),
      );
    expect(offRoute.length).toBeGreaterThan(candidates.length / 2);
    for (const response of await Promise.all(offRoute)) {
      expect(response.status, response.url).toBe(404);
      expect(response.headers.get("content-type")).toBe("application/json");
      expect(response.headers.get("allow")).toBeNull();
      expect(await response.text()).toBe('{"message":"Not Found"}');
    }
    // The handler never saw them: id 5 was not created.
    expect((await post('{"id":5,"name":"Basil"}', token)).status).toBe(200);
  });

  it("lets `npm run invoke` use the running server's store", async () => {
    const { stdout } = await npmRun("invoke", ["local/events/duplicate-plant.json"], {
      PLANTS_DATA_DIR: dataDir,
    });
    expect(JSON.parse(stdout)).toMatchObject({ statusCode: 409 });
  });

  it("prints one line per request: the function's log line, or its own where the function did not answer", async () => {
    const from = server.output().length;
    const token = bearer(tokenFromBeforeRestart);
    expect((await post('{"id":70,"name":"Ivy"}', token)).status).toBe(200);
    expect((await post('{"id":70,"name":"Ivy"}')).status).toBe(401);
    expect((await fetch(`${server.url}/nowhere`)).status).toBe(404);
    expect((await post('{"id":71,"name":"Moss"}', token)).status).toBe(200);
    // Each request's lines are written before the next request is served: once the last one's line is
    // there, so are all the others'.
    for (let waited = 0; !server.output().slice(from).includes('"plantId":"71"'); waited++) {
      if (waited > 500) throw new Error(`no line for the last request:\n${server.output().slice(from)}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const lines = server.output().slice(from).trimEnd().split("\n");
    expect(lines).toHaveLength(4);
    const [created, refused, notFound, last] = lines;
    expect(JSON.parse(created ?? "")).toMatchObject({ status: 200, plantId: "70" });
    expect(JSON.parse(refused ?? "")).toMatchObject({ status: 401, errorKind: "missing_token" });
    expect(notFound).toMatch(/^GET \/nowhere 404 \d+ms$/);
    expect(JSON.parse(last ?? "")).toMatchObject({ status: 200, plantId: "71" });
    expect(server.output()).not.toContain(tokenFromBeforeRestart);
  });

  it("stops cleanly on SIGTERM and, restarted, still has its plants and takes tokens minted before", async () => {
    expect(await server.stop()).toBe(0);
    await expect(access(join(dataDir, "server.json"))).rejects.toThrow();
    server = await startServer({ PLANTS_DATA_DIR: dataDir });

    expect((await post('{"id":1,"name":"Cactus"}', bearer(tokenFromBeforeRestart))).status).toBe(409);
    const created = await post('{"id":4,"name":"Basil"}', bearer(tokenFromBeforeRestart));
    expect(created.status).toBe(200);
    expect(await created.json()).toEqual({ name: "Basil" });
  });
});
