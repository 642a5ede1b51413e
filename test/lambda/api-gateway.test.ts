/**
 * How the handler reads what API Gateway hands over: repeated headers, base64 bodies, bodies that
 * were not UTF-8 (delivered as text with U+FFFD), and body sizes as the client sent them. What the
 * body then holds (Latin-1 names, blank ones, control characters) is test/lambda/parse-new-plant.test.ts's.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ApiGatewayEvent, toApiRequest } from "../../lambda/http/api-gateway.ts";
import { apiGatewayEvent, PAYLOAD_VERSIONS, type PayloadVersion } from "../../support/events.ts";
import { type Harness, startHarness, TEST_TABLE } from "../../support/harness.ts";
import { expectErrorAnswer } from "../support/answers.ts";
import { readStoredItem } from "../support/stored-item.ts";

let harness: Harness;
let token: string;
let nextId = 5000;

beforeAll(async () => {
  harness = await startHarness();
  token = await harness.issuer.mint();
});
afterAll(async () => {
  await harness?.close();
});

const storedItem = (id: number) => readStoredItem(harness.dynamoDb.endpoint, TEST_TABLE, id);

/**
 * The event API Gateway makes of these bytes sent as application/json: the body as text, each
 * sequence that is not UTF-8 replaced by U+FFFD, and the client's Content-Length.
 */
function sentAsJson(version: PayloadVersion, bytes: Uint8Array): ApiGatewayEvent {
  return apiGatewayEvent(version, {
    token,
    body: new TextDecoder().decode(bytes),
    headers: { "Content-Length": String(bytes.byteLength) },
  });
}

describe("toApiRequest headers", () => {
  it("joins payload 1.0 values of one name in any case, reading multiValueHeaders only", () => {
    const event = apiGatewayEvent("1.0", { withoutHeaders: ["authorization"] }) as ApiGatewayEvent & {
      headers: Record<string, string>;
      multiValueHeaders: Record<string, string[]>;
    };
    // API Gateway writes the last value of each name into `headers`, all of them into multiValueHeaders.
    event.headers.Authorization = "Bearer a";
    event.headers.authorization = "Bearer c";
    event.multiValueHeaders.Authorization = ["Bearer a"];
    event.multiValueHeaders.authorization = ["Bearer b", "Bearer c"];
    expect(toApiRequest(event).headers.get("authorization")).toBe("Bearer a,Bearer b,Bearer c");
    expect(toApiRequest(event).headers.get("content-type")).toBe("application/json");
  });

  it("reads a header found only in `headers`, and joins names that differ in case there too", () => {
    const event = apiGatewayEvent("2.0") as ApiGatewayEvent & { headers: Record<string, string> };
    event.headers["X-Trace"] = "a";
    event.headers["x-trace"] = "b";
    expect(toApiRequest(event).headers.get("x-trace")).toBe("a,b");
    const v1 = apiGatewayEvent("1.0") as ApiGatewayEvent & { headers: Record<string, string> };
    v1.headers["X-Only-Here"] = "1";
    expect(toApiRequest(v1).headers.get("x-only-here")).toBe("1");
  });
});

describe("toApiRequest body", () => {
  it("takes a body as base64 only when isBase64Encoded is the boolean true, as API Gateway sends it", () => {
    const body = '{"id":1,"name":"Fern"}';
    const withFlag = (isBase64Encoded: unknown) =>
      toApiRequest({ ...apiGatewayEvent("2.0", { body }), isBase64Encoded } as ApiGatewayEvent).body;
    // A hand-written test event may carry the flag as text; "false" must not turn a JSON body into base64.
    for (const flag of [false, "false", "true", 1, undefined]) {
      expect(withFlag(flag)).toMatchObject({ encoding: "text", text: body });
    }
    expect(withFlag(true)).toMatchObject({ encoding: "base64", base64: body });
  });
});

describe.each(PAYLOAD_VERSIONS)("the handler, payload %s", (version) => {
  // A base64 body that is not canonical: 400 through the handler in the body properties (properties.test.ts),
  // read only after authentication as any body is (below), kept undecoded until then (toApiRequest, above).
  describe("a body in a content coding", () => {
    const withCoding = (id: number, contentEncoding: string, options: { token?: string } = { token }) =>
      apiGatewayEvent(version, {
        ...options,
        body: JSON.stringify({ id, name: "Moss" }),
        headers: { "Content-Encoding": contentEncoding },
      });

    it.each([
      ["gzip", "gzip"],
      [" GZIP ", "GZIP"],
      ["br", "br"],
      ["identity, deflate", "identity, deflate"],
    ])("is refused with 415 naming it (Content-Encoding %j), and nothing is stored", async (sent, named) => {
      const id = nextId++;
      const result = await harness.handler(withCoding(id, sent));
      expect(expectErrorAnswer(result, 415).message).toBe(
        `the Content-Encoding '${named}' is not supported; send the body uncompressed`,
      );
      expect(await storedItem(id)).toBeUndefined();
    });

    it("is refused only after authentication: without a token it is 401", async () => {
      const result = await harness.handler(withCoding(nextId++, "gzip", {}));
      expect(result.statusCode).toBe(401);
    });

    it.each(["identity", " Identity ", "IDENTITY,identity"])("is read when it is %j", async (sent) => {
      const id = nextId++;
      const result = await harness.handler(withCoding(id, sent));
      expect(result.statusCode).toBe(200);
      expect(await storedItem(id)).toBeDefined();
    });
  });

  it("counts the bytes the client sent: 200 invalid bytes in a 16384-byte body are 200 bytes, not 600", async () => {
    const id = nextId++;
    const body = (size: number) => {
      const head = `{"id":${id},"name":"`;
      const filler = "x".repeat(size - head.length - 2 - 200);
      return Buffer.concat([Buffer.from(head + filler), Buffer.alloc(200, 0xff), Buffer.from('"}')]);
    };
    const atLimit = await harness.handler(sentAsJson(version, body(16_384)));
    expect(expectErrorAnswer(atLimit, 400).message).toBe(
      "name contains bytes that are not UTF-8 (U+FFFD); name must have at most 256 characters",
    );
    const overLimit = await harness.handler(sentAsJson(version, body(16_385)));
    expect(expectErrorAnswer(overLimit, 413).message).toBe(
      "the body is 16385 bytes; at most 16384 are accepted",
    );
  });
});
