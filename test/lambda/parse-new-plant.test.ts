import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { parseNewPlant as parseBody } from "../../lambda/request/parse-new-plant.ts";
import { MAX_BODY_BYTES, type RequestBody } from "../../lambda/request/request-body.ts";

const JSON_TYPE = "application/json";

/** A body as API Gateway hands it over: text (optionally with its Content-Length), or bytes in base64. */
type Body = string | Uint8Array | RequestBody | undefined;

function asRequestBody(body: Body): RequestBody | undefined {
  if (typeof body === "string") return { encoding: "text", text: body, contentLength: undefined };
  if (body instanceof Uint8Array) return { encoding: "base64", base64: Buffer.from(body).toString("base64") };
  return body;
}

function parseNewPlant(contentType: string | undefined, body: Body) {
  return parseBody(contentType, asRequestBody(body));
}

async function failure(contentType: string | undefined, body: Body): Promise<Error> {
  try {
    await parseNewPlant(contentType, body);
  } catch (error) {
    return error as Error;
  }
  throw new Error("expected parseNewPlant to refuse the request");
}

/** Asserts that parseNewPlant refuses `body` (as JSON) with the error `code` and exactly `message`. */
async function expectRefused(body: Body, message: string, code = "BadRequest") {
  const error = await failure(JSON_TYPE, body);
  expect(error).toMatchObject({ code });
  expect(error.message).toBe(message);
}

/** What API Gateway hands over for these bytes sent as application/json: text, with U+FFFD for what is not UTF-8. */
function deliveredAsText(bytes: Uint8Array): Extract<RequestBody, { encoding: "text" }> {
  return { encoding: "text", text: new TextDecoder().decode(bytes), contentLength: String(bytes.byteLength) };
}

const latin1 = (text: string) => Buffer.from(text, "latin1");

describe("parseNewPlant", () => {
  it("returns the plant with an exact id", async () => {
    expect(await parseNewPlant(JSON_TYPE, '{"id":1,"name":"Fern","tag":"indoor"}')).toEqual({
      id: 1n,
      name: "Fern",
      tag: "indoor",
    });
    expect((await parseNewPlant(JSON_TYPE, '{"id":9007199254740993,"name":"Fern"}')).id).toBe(
      9007199254740993n,
    );
    expect((await parseNewPlant(JSON_TYPE, '{"id":-0,"name":"Fern"}')).id).toBe(0n);
    expect((await parseNewPlant(JSON_TYPE, '{"id":1e3,"name":"Fern"}')).id).toBe(1000n);
  });

  it("accepts the whole int64 range and nothing beyond", async () => {
    expect((await parseNewPlant(JSON_TYPE, '{"id":9223372036854775807,"name":"x"}')).id).toBe(
      9223372036854775807n,
    );
    expect((await parseNewPlant(JSON_TYPE, '{"id":-9223372036854775808,"name":"x"}')).id).toBe(
      -9223372036854775808n,
    );
    const manyDigits = `1${"0".repeat(16_000)}1`;
    for (const id of [
      "9223372036854775808",
      "-9223372036854775809",
      "1.5",
      "1e400",
      manyDigits,
      // Fractions whose nearest double is an integer: never rounded into an id.
      "1e-400",
      "1.00000000000000000001",
      '"1"',
      "null",
    ]) {
      await expectRefused(
        `{"id":${id},"name":"x"}`,
        "id must be an integer between -9223372036854775808 and 9223372036854775807",
      );
    }
  });

  it("reads an int64 written any way JSON allows as exactly that integer", async () => {
    expect((await parseNewPlant(JSON_TYPE, '{"id":9007199254740993.0,"name":"x"}')).id).toBe(
      9007199254740993n,
    );
    expect((await parseNewPlant(JSON_TYPE, '{"id":9.007199254740993e15,"name":"x"}')).id).toBe(
      9007199254740993n,
    );
    const int64 = fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n });
    await fc.assert(
      fc.asyncProperty(int64, fc.nat(20), fc.nat(20), async (value, shift, padding) => {
        // value / 10^shift, its fraction padded with zeros, times 10^shift: e.g. 125 as 1.2500e2.
        const digits = `${"0".repeat(shift + 1)}${value < 0n ? -value : value}`;
        const point = digits.length - shift;
        const integerPart = digits.slice(0, point).replace(/^0+(?=\d)/, "");
        const fraction = `${digits.slice(point)}${"0".repeat(padding)}`;
        const text = `${value < 0n ? "-" : ""}${integerPart}${fraction ? `.${fraction}` : ""}e${shift}`;
        expect((await parseNewPlant(JSON_TYPE, `{"id":${text},"name":"x"}`)).id).toBe(value);
      }),
    );
  });

  it.each([
    ['{"name":"Fern"}', "id is required"],
    ['{"id":1}', "name is required"],
    ['{"id":1,"name":"Fern","tga":"x"}', "unknown property 'tga'"],
    ['{"id":1,"nme":"Fern"}', "name is required; unknown property 'nme'"],
    ['{"id":1,"name":5}', "name must be a string"],
    ['{"id":1,"name":""}', "name must not be empty"],
    [`{"id":1,"name":"${"a".repeat(257)}"}`, "name must have at most 256 characters"],
    [`{"id":1,"name":"a","tag":"${"a".repeat(65)}"}`, "tag must have at most 64 characters"],
    ['{"id":1,"name":"a","tag":null}', "tag must be a string"],
    ["[1]", "the body must be a JSON object"],
    ['"Fern"', "the body must be a JSON object"],
    // I-JSON (RFC 7493), as openapi.yaml states it: no key twice, whatever its values or its spelling.
    ['{"id":1,"name":"a","id":2}', "duplicate property 'id'"],
    ['{"id":1,"name":"a","name":"a"}', "duplicate property 'name'"],
    ['{"id":1,"n\\u0061me":"a","name":"a"}', "duplicate property 'name'"],
    ['{"id":1,"name":"a","x":[{"id":1,"id":1}]}', "duplicate property 'id'"],
    ['{"id":1,"name":"\\ud800"}', "name holds an unpaired surrogate (not well-formed Unicode)"],
    [
      '{"id":1,"name":"a","\\udc00":1}',
      "a property name holds an unpaired surrogate (not well-formed Unicode)",
    ],
    [`{"id":1,"name":"a","x":${"[".repeat(32)}${"]".repeat(32)}}`, "the body nests deeper than 32 levels"],
    [`${"[".repeat(8000)}${"]".repeat(8000)}`, "the body nests deeper than 32 levels"],
    [
      '{"id":1,',
      "the body is not valid JSON: Quoted object key expected but reached end of input at position 8",
    ],
    ['{"id":1,"name":"a"} x', "the body is not valid JSON: Expected end of input but got 'x' at position 20"],
    ['{"__proto__":{},"id":1,"name":"a"}', "unknown property '__proto__'"],
  ])("refuses %s: %s", async (body, message) => {
    await expectRefused(body, message);
  });

  it("reads an escaped key as written after a body that misleads JSON.parse on Node 24 (docs/DESIGN.md)", async () => {
    expect((await failure(JSON_TYPE, '{"id":1,"nam\\\\":"x"}')).message).toBe(
      "name is required; unknown property 'nam\\'",
    );
    expect(await parseNewPlant(JSON_TYPE, '{"id":1,"nam\\u0065":"Fern"}')).toEqual({ id: 1n, name: "Fern" });
  });

  it("lists at most 10 problems, so that the answer stays short whatever the body", async () => {
    const keys = Array.from({ length: 1500 }, (_, index) => `"k${index}":0`);
    const error = await failure(JSON_TYPE, `{"id":1,"name":"a",${keys.join(",")}}`);
    expect(error.message).toBe(
      `${Array.from({ length: 10 }, (_, index) => `unknown property 'k${index}'`).join("; ")}; and 1490 more`,
    );
  });

  it("counts name lengths in characters, not UTF-16 units", async () => {
    const name = "🌿".repeat(256);
    expect((await parseNewPlant(JSON_TYPE, JSON.stringify({ id: 1, name }))).name).toBe(name);
  });

  it("requires a body", async () => {
    expect((await failure(JSON_TYPE, undefined)).message).toBe(
      "the body is required: a NewPlant JSON object",
    );
    expect((await failure(JSON_TYPE, "")).message).toBe("the body is required: a NewPlant JSON object");
  });

  it("refuses bodies over the limit in bytes with 413, counting multi-byte characters", async () => {
    const padding = "é".repeat(MAX_BODY_BYTES / 2); // 2 bytes each in UTF-8
    const error = await failure(JSON_TYPE, JSON.stringify({ id: 1, name: padding }));
    expect(error).toMatchObject({ code: "PayloadTooLarge" });
    expect(error.message).toMatch(/^the body is \d+ bytes; at most 16384 are accepted$/);
  });

  it("decodes byte bodies as strict UTF-8", async () => {
    expect((await parseNewPlant(JSON_TYPE, new TextEncoder().encode('{"id":2,"name":"Fern"}'))).id).toBe(2n);
    await expectRefused(new Uint8Array([0x7b, 0xff, 0x7d]), "the body is not valid UTF-8");
  });

  describe("names and tags", () => {
    it.each([
      ["name", " ", "name must not be blank"],
      ["name", "\t\u3000\u00a0 ", "name must not be blank; name must not contain control characters"],
      ["tag", "\u2028", "tag must not be blank"],
      ["name", "Fern\u0000", "name must not contain control characters"],
      ["name", "a\u001fb", "name must not contain control characters"],
      ["tag", "\u007f", "tag must not contain control characters"],
      ["tag", "x\u0085", "tag must not contain control characters"],
      ["name", "\u0080", "name must not contain control characters"],
      ["name", "\u009f", "name must not contain control characters"],
      ["name", "Fern\n", "name must not contain control characters"],
      ["name", "bad \ufffd\ufffd", "name contains bytes that are not UTF-8 (U+FFFD)"],
      ["tag", "\ufffd", "tag contains bytes that are not UTF-8 (U+FFFD)"],
    ])("refuses a %s of %j: %s", async (field, value, message) => {
      const plant = field === "name" ? { id: 1, name: value } : { id: 1, name: "Fern", tag: value };
      await expectRefused(JSON.stringify(plant), message);
    });

    it.each([" Fern", "Fern ", "Ivy\u00a0League", "🌿", "\u00a0x", "\u00a0\u00a1"])(
      "accepts %j: spaces around or inside a name, no control characters",
      async (name) => {
        expect(await parseNewPlant(JSON_TYPE, JSON.stringify({ id: 1, name, tag: name }))).toEqual({
          id: 1n,
          name,
          tag: name,
        });
      },
    );

    it("refuses Latin-1 names instead of storing two of them as the same name", async () => {
      for (const name of ["caf\xe9", "caf\xe8"]) {
        const error = await failure(JSON_TYPE, deliveredAsText(latin1(`{"id":77,"name":"${name}"}`)));
        expect(error).toMatchObject({ code: "BadRequest" });
        expect(error.message).toBe("name contains bytes that are not UTF-8 (U+FFFD)");
      }
    });
  });

  describe("base64 bodies", () => {
    /** The same bytes, but the last character before the padding also sets a padding bit. */
    const withPaddingBitSet = (encoded: string): string => {
      const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
      const at = encoded.indexOf("=") - 1;
      const changed = alphabet[alphabet.indexOf(encoded[at] ?? "") ^ 1];
      return `${encoded.slice(0, at)}${changed}${encoded.slice(at + 1)}`;
    };

    const base64 = (text: string): RequestBody => ({ encoding: "base64", base64: text });
    const fern = Buffer.from('{"id":3,"name":"Fern"}').toString("base64");

    it("decodes canonical base64", async () => {
      expect(fern.endsWith("=")).toBe(true);
      expect(await parseNewPlant(JSON_TYPE, base64(fern))).toEqual({ id: 3n, name: "Fern" });
    });

    it.each([
      ["a character outside the alphabet", `${fern.slice(0, 4)}*${fern.slice(4)}`],
      ["the URL-safe alphabet", Buffer.from('{"id":3,"name":"~~~"}').toString("base64url")],
      ["whitespace", `${fern.slice(0, 8)}\n${fern.slice(8)}`],
      ["data after the padding", `${fern}eyJ9`],
      ["padding in the middle", `${fern.slice(0, 4)}=${fern.slice(4)}`],
      ["missing padding", fern.replace(/=+$/, "")],
      ["non-zero padding bits", withPaddingBitSet(fern)],
    ])("refuses %s with 400", async (_, text) => {
      await expectRefused(base64(text), "the body is not valid base64");
    });
  });

  describe("sizes, as the client sent them", () => {
    /** A body of exactly `bytes` bytes whose name ends with `invalid` bytes that are not UTF-8. */
    function bodyWithInvalidBytes(bytes: number, invalid: number): Uint8Array {
      const head = '{"id":5,"name":"';
      const tail = '"}';
      const padding = bytes - head.length - tail.length - invalid;
      return Buffer.concat([
        Buffer.from(head + "x".repeat(padding)),
        Buffer.alloc(invalid, 0xff),
        Buffer.from(tail),
      ]);
    }

    it("takes a 16384-byte body with 200 invalid bytes for 16384 bytes, and refuses its name", async () => {
      const sent = bodyWithInvalidBytes(MAX_BODY_BYTES, 200);
      const error = await failure(JSON_TYPE, deliveredAsText(sent));
      expect(error).toMatchObject({ code: "BadRequest" });
      expect(error.message).toContain("name contains bytes that are not UTF-8 (U+FFFD)");
      const withoutContentLength = { ...deliveredAsText(sent), contentLength: undefined };
      expect(await failure(JSON_TYPE, withoutContentLength)).toMatchObject({ code: "BadRequest" });
    });

    it("reports the size the client sent, not the size of its U+FFFD replacements", async () => {
      const sent = bodyWithInvalidBytes(MAX_BODY_BYTES + 1, 200);
      const expected = "the body is 16385 bytes; at most 16384 are accepted";
      await expectRefused(deliveredAsText(sent), expected, "PayloadTooLarge");
      expect((await failure(JSON_TYPE, { ...deliveredAsText(sent), contentLength: undefined })).message).toBe(
        expected,
      );
    });

    it("counts a 3-byte invalid sequence as 3 bytes when the Content-Length says so", async () => {
      // F0 9F 8C (a truncated 4-byte sequence) becomes one U+FFFD: 3 bytes sent, 1 counted without the header.
      const sent = Buffer.concat([
        Buffer.from(`{"id":5,"name":"${"x".repeat(MAX_BODY_BYTES - 20)}`),
        Buffer.from([0xf0, 0x9f, 0x8c]),
        Buffer.from('"}'),
      ]);
      expect(sent.byteLength).toBe(MAX_BODY_BYTES + 1);
      expect((await failure(JSON_TYPE, deliveredAsText(sent))).message).toBe(
        "the body is 16385 bytes; at most 16384 are accepted",
      );
    });

    it("ignores a Content-Length the text cannot match, so that no header lets a large body through", async () => {
      const text = JSON.stringify({ id: 1, name: "x".repeat(40_000) });
      const error = await failure(JSON_TYPE, { encoding: "text", text, contentLength: "28" });
      expect(error).toMatchObject({ code: "PayloadTooLarge" });
      expect(error.message).toBe(`the body is ${text.length} bytes; at most 16384 are accepted`);
    });

    it("counts a base64 body by its decoded bytes", async () => {
      const bytes = new TextEncoder().encode(JSON.stringify({ id: 1, name: "é".repeat(MAX_BODY_BYTES / 2) }));
      expect((await failure(JSON_TYPE, bytes)).message).toBe(
        `the body is ${bytes.byteLength} bytes; at most 16384 are accepted`,
      );
      const fits = new TextEncoder().encode(JSON.stringify({ id: 1, name: "é".repeat(128) }));
      expect((await parseNewPlant(JSON_TYPE, fits)).name).toBe("é".repeat(128));
    });
  });

  it.each([
    "application/json",
    "Application/JSON",
    "application/json; charset=utf-8",
    'application/json;charset="UTF-8"',
  ])("accepts Content-Type %s", async (contentType) => {
    expect((await parseNewPlant(contentType, '{"id":1,"name":"a"}')).name).toBe("a");
  });

  it.each([undefined, "", "text/plain", "application/x-www-form-urlencoded", "application/json-patch+json"])(
    "refuses Content-Type %j with 415",
    async (contentType) => {
      const error = await failure(contentType, '{"id":1,"name":"a"}');
      expect(error).toMatchObject({ code: "UnsupportedMediaType" });
      expect(error.message).toBe("the Content-Type header must be application/json");
    },
  );

  it("refuses a charset other than UTF-8 with 415", async () => {
    const error = await failure("application/json; charset=latin1", '{"id":1,"name":"a"}');
    expect(error).toMatchObject({ code: "UnsupportedMediaType" });
    expect(error.message).toBe("the Content-Type charset must be utf-8");
  });
});
