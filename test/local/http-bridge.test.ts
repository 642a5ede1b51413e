import { createServer, request, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type HttpApiEvent, readBody, toHttpApiEvent, writeHttpApiResult } from "../../local/http-bridge.ts";

describe("the local API Gateway bridge (payload format 2.0)", () => {
  let server: Server;
  let port: number;

  beforeAll(async () => {
    // Echoes the event it made of the request; `/result` answers with cookies and a base64 body instead.
    server = createServer(async (incoming, response) => {
      const event = toHttpApiEvent(incoming, (await readBody(incoming)) ?? Buffer.of(), "POST /plants");
      if (event.rawPath === "/result") {
        writeHttpApiResult(response, {
          statusCode: 201,
          headers: { "Content-Type": "application/octet-stream" },
          cookies: ["a=1; Path=/", "b=2"],
          body: Buffer.from([0, 1, 2, 255]).toString("base64"),
          isBase64Encoded: true,
        });
        return;
      }
      writeHttpApiResult(response, { statusCode: 200, body: JSON.stringify(event) });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    port = (server.address() as AddressInfo).port;
  });

  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  function send(path: string, headers: Record<string, string | string[]>, body?: Buffer | string) {
    return new Promise<{ status: number; headers: Record<string, unknown>; body: Buffer }>(
      (resolve, reject) => {
        const outgoing = request({ port, host: "127.0.0.1", path, method: "POST", headers }, (response) => {
          const chunks: Buffer[] = [];
          response.on("data", (chunk: Buffer) => chunks.push(chunk));
          response.on("end", () =>
            resolve({
              status: response.statusCode ?? 0,
              headers: response.headers,
              body: Buffer.concat(chunks),
            }),
          );
        });
        outgoing.on("error", reject);
        outgoing.end(body);
      },
    );
  }

  async function eventOf(path: string, headers: Record<string, string | string[]>, body?: Buffer | string) {
    return JSON.parse((await send(path, headers, body)).body.toString()) as HttpApiEvent;
  }

  it("lower-cases headers, joins repeated ones with commas, and moves cookies to their own list", async () => {
    const event = await eventOf("/plants?b=2&a=1&a=3", {
      "X-Forwarded-For": ["198.51.100.1", "198.51.100.2"],
      Authorization: ["Bearer one", "Bearer two"],
      Cookie: "session=abc; theme=dark",
      "content-type": "application/json",
    });
    expect(event).toMatchObject({
      version: "2.0",
      routeKey: "POST /plants",
      rawPath: "/plants",
      rawQueryString: "b=2&a=1&a=3",
      queryStringParameters: { a: "1,3", b: "2" },
      cookies: ["session=abc", "theme=dark"],
      requestContext: { http: { method: "POST", path: "/plants", sourceIp: "127.0.0.1" }, stage: "$default" },
      isBase64Encoded: false,
    });
    // API Gateway appends the client's address, and adds the port, scheme and a trace id.
    expect(event.headers["x-forwarded-for"]).toBe("198.51.100.1,198.51.100.2, 127.0.0.1");
    expect(event.headers["x-forwarded-port"]).toBe(String(port));
    expect(event.headers["x-forwarded-proto"]).toBe("http");
    expect(event.headers["x-amzn-trace-id"]).toMatch(/^Root=1-[0-9a-f]{8}-[0-9a-f]{24}$/);
    expect(event.headers.authorization).toBe("Bearer one,Bearer two");
    expect(event.headers.cookie).toBeUndefined();
    expect(event.requestContext.requestId).toMatch(/^[\w-]{20,}$/);
  });

  it("passes JSON and text bodies as text, and any other body base64-encoded", async () => {
    const json = await eventOf("/plants", { "content-type": "application/json; charset=utf-8" }, '{"id":1}');
    expect(json).toMatchObject({ body: '{"id":1}', isBase64Encoded: false });
    const binary = await eventOf("/plants", { "content-type": "image/png" }, Buffer.from([0, 255]));
    expect(binary).toMatchObject({ body: Buffer.from([0, 255]).toString("base64"), isBase64Encoded: true });
    const empty = await eventOf("/plants", {});
    expect(empty.body).toBeUndefined();
  });

  it("answers with the result's status, headers, cookies and decoded base64 body", async () => {
    const response = await send("/result", {});
    expect(response.status).toBe(201);
    expect(response.headers["content-type"]).toBe("application/octet-stream");
    expect(response.headers["set-cookie"]).toEqual(["a=1; Path=/", "b=2"]);
    expect([...response.body]).toEqual([0, 1, 2, 255]);
  });
});
