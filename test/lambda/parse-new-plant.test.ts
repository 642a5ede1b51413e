import { describe, expect, it } from "vitest";
import { BadRequestError, PayloadTooLargeError, UnsupportedMediaTypeError } from "../../lambda/errors.ts";
import { MAX_BODY_BYTES, parseNewPlant } from "../../lambda/request/parse-new-plant.ts";

const JSON_TYPE = "application/json";

function failure(contentType: string | undefined, body: string | Uint8Array | undefined): Error {
  try {
    parseNewPlant(contentType, body);
  } catch (error) {
    return error as Error;
  }
  throw new Error("expected parseNewPlant to refuse the request");
}

describe("parseNewPlant", () => {
  it("returns the plant with an exact id", () => {
    expect(parseNewPlant(JSON_TYPE, '{"id":1,"name":"Fern","tag":"indoor"}')).toEqual({
      id: 1n,
      name: "Fern",
      tag: "indoor",
    });
    expect(parseNewPlant(JSON_TYPE, '{"id":9007199254740993,"name":"Fern"}').id).toBe(9007199254740993n);
    expect(parseNewPlant(JSON_TYPE, '{"id":-0,"name":"Fern"}').id).toBe(0n);
    expect(parseNewPlant(JSON_TYPE, '{"id":1e3,"name":"Fern"}').id).toBe(1000n);
  });

  it("accepts the whole int64 range and nothing beyond", () => {
    expect(parseNewPlant(JSON_TYPE, '{"id":9223372036854775807,"name":"x"}').id).toBe(9223372036854775807n);
    expect(parseNewPlant(JSON_TYPE, '{"id":-9223372036854775808,"name":"x"}').id).toBe(-9223372036854775808n);
    for (const id of ["9223372036854775808", "-9223372036854775809", "1.5", "1e400", '"1"', "null"]) {
      const error = failure(JSON_TYPE, `{"id":${id},"name":"x"}`);
      expect(error).toBeInstanceOf(BadRequestError);
      expect(error.message).toBe(
        "id must be an integer between -9223372036854775808 and 9223372036854775807",
      );
    }
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
    ['{"id":1,"name":"a","id":2}', "the body is not valid JSON: duplicate property 'id' at position 19"],
    ['{"id":1,', "the body is not valid JSON: expected a property name at position 8"],
    ['{"__proto__":{},"id":1,"name":"a"}', "unknown property '__proto__'"],
  ])("refuses %s: %s", (body, message) => {
    const error = failure(JSON_TYPE, body);
    expect(error).toBeInstanceOf(BadRequestError);
    expect(error.message).toBe(message);
  });

  it("counts name lengths in characters, not UTF-16 units", () => {
    const name = "🌿".repeat(256);
    expect(parseNewPlant(JSON_TYPE, JSON.stringify({ id: 1, name })).name).toBe(name);
  });

  it("requires a body", () => {
    expect(failure(JSON_TYPE, undefined).message).toBe("the body is required: a NewPlant JSON object");
    expect(failure(JSON_TYPE, "").message).toBe("the body is required: a NewPlant JSON object");
  });

  it("refuses bodies over the limit in bytes with 413, counting multi-byte characters", () => {
    const padding = "é".repeat(MAX_BODY_BYTES / 2); // 2 bytes each in UTF-8
    const error = failure(JSON_TYPE, JSON.stringify({ id: 1, name: padding }));
    expect(error).toBeInstanceOf(PayloadTooLargeError);
    expect(error.message).toMatch(/^the body is \d+ bytes; at most 16384 are accepted$/);
  });

  it("decodes byte bodies as strict UTF-8", () => {
    expect(parseNewPlant(JSON_TYPE, new TextEncoder().encode('{"id":2,"name":"Fern"}')).id).toBe(2n);
    const error = failure(JSON_TYPE, new Uint8Array([0x7b, 0xff, 0x7d]));
    expect(error).toBeInstanceOf(BadRequestError);
    expect(error.message).toBe("the body is not valid UTF-8");
  });

  it.each([
    "application/json",
    "Application/JSON",
    "application/json; charset=utf-8",
    'application/json;charset="UTF-8"',
  ])("accepts Content-Type %s", (contentType) => {
    expect(parseNewPlant(contentType, '{"id":1,"name":"a"}').name).toBe("a");
  });

  it.each([undefined, "", "text/plain", "application/x-www-form-urlencoded", "application/json-patch+json"])(
    "refuses Content-Type %j with 415",
    (contentType) => {
      const error = failure(contentType, '{"id":1,"name":"a"}');
      expect(error).toBeInstanceOf(UnsupportedMediaTypeError);
      expect(error.message).toBe("the Content-Type header must be application/json");
    },
  );

  it("refuses a charset other than UTF-8 with 415", () => {
    const error = failure("application/json; charset=latin1", '{"id":1,"name":"a"}');
    expect(error).toBeInstanceOf(UnsupportedMediaTypeError);
    expect(error.message).toBe("the Content-Type charset must be utf-8");
  });
});
