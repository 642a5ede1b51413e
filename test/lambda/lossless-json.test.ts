import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { JsonSyntaxError, parseJson } from "../../lambda/request/lossless-json.ts";
import { growthRatio } from "../support/growth.ts";

describe("parseJson", () => {
  it("parses what JSON.parse parses, for ordinary documents", () => {
    const text =
      '{"a":[1,-2.5,true,false,null,"x\\n\\u00e9\\u00C9\\uAbCd\\ud83c\\udf3f\\"\\\\\\/\\b\\f\\r\\t"],"b":{"c":""},"d":1e2}';
    expect(JSON.stringify(parseJson(text))).toBe(JSON.stringify(JSON.parse(text)));
  });

  it("keeps integers beyond 2^53 digit for digit", () => {
    expect(parseJson("9007199254740993")).toBe(9007199254740993n);
    expect(parseJson("9007199254740992")).toBe(9007199254740992n);
    expect(parseJson("-9223372036854775808")).toBe(-9223372036854775808n);
    expect(parseJson("9223372036854775808")).toBe(9223372036854775808n);
  });

  it("returns safe integers as numbers, whatever their notation", () => {
    expect(parseJson("1e3")).toBe(1000);
    expect(parseJson("1.0")).toBe(1);
    expect(parseJson("12.5e1")).toBe(125);
    expect(parseJson("9007199254740991")).toBe(9007199254740991);
    expect(Object.is(parseJson("-0"), -0)).toBe(true);
  });

  it("keeps large integers written with a fraction or exponent exact", () => {
    expect(parseJson("9007199254740993.0")).toBe(9007199254740993n);
    expect(parseJson("9.007199254740993e15")).toBe(9007199254740993n);
  });

  it("never lets a fraction round to an integer", () => {
    expect(parseJson("1.5")).toBe(1.5);
    expect(parseJson("1e-400")).toBeNaN();
    expect(parseJson("1.00000000000000000001")).toBeNaN();
  });

  it("leaves far-out-of-range integers inexact rather than spending time on them", () => {
    expect(parseJson("1e400")).toBe(Number.POSITIVE_INFINITY);
    expect(typeof parseJson(`1${"0".repeat(100)}`)).toBe("number");
  });

  it("treats __proto__ as an ordinary key", () => {
    const value = parseJson('{"__proto__":{"polluted":true}}') as Record<string, unknown>;
    expect(Object.keys(value)).toEqual(["__proto__"]);
    expect(Object.getOwnPropertyDescriptor(value, "__proto__")?.value).toEqual({ polluted: true });
    expect(Object.getPrototypeOf(value)).toBeNull();
  });

  it("reads an integer written any way JSON allows as exactly that integer", () => {
    const int64 = fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n });
    fc.assert(
      fc.property(int64, fc.nat(20), fc.nat(20), (value, shift, padding) => {
        // value / 10^shift, its fraction padded with zeros, times 10^shift: e.g. 125 as 1.2500e2.
        const digits = `${"0".repeat(shift + 1)}${value < 0n ? -value : value}`;
        const point = digits.length - shift;
        const integerPart = digits.slice(0, point).replace(/^0+(?=\d)/, "");
        const fraction = `${digits.slice(point)}${"0".repeat(padding)}`;
        const text = `${value < 0n ? "-" : ""}${integerPart}${fraction ? `.${fraction}` : ""}e${shift}`;
        const parsed = parseJson(text);
        expect(BigInt(parsed as bigint | number)).toBe(value);
        expect(typeof parsed).toBe(Number.isSafeInteger(Number(value)) ? "number" : "bigint");
      }),
    );
  });

  it("reads numbers of 16,000 digits (a whole body) correctly", () => {
    const zeros = "0".repeat(16_000);
    expect(parseJson(`1${zeros}1`)).toBe(Number.POSITIVE_INFINITY);
    expect(parseJson(`-1${zeros}.0`)).toBe(Number.NEGATIVE_INFINITY);
    expect(parseJson(`1${zeros}.0e-16000`)).toBe(1);
    expect(parseJson(`0.${zeros}1e16001`)).toBe(1);
    expect(parseJson(`9007199254740993${zeros}e-16000`)).toBe(9007199254740993n);
    expect(parseJson(`0.${zeros}1`)).toBeNaN();
    expect(parseJson(`1.${zeros}1`)).toBeNaN();
    expect(parseJson(`1e${zeros}1`)).toBe(10);
    expect(parseJson(`-0.${zeros}`)).toBe(-0);
  });

  // A quadratic step (a regular expression retried at every digit of a run) takes 16 times the time for
  // 4 times the digits (some 40 s on 250,000 of them); a linear parser takes about 4 times.
  it("parses a number of many digits in time that grows with the length, not with its square", () => {
    const parseLongNumbers = (digits: number) => {
      const zeros = "0".repeat(digits);
      expect(parseJson(`[1${zeros}1, 1${zeros}.0, 0.${zeros}1]`)).toEqual([
        Number.POSITIVE_INFINITY,
        Number.POSITIVE_INFINITY,
        Number.NaN,
      ]);
    };
    expect(growthRatio(parseLongNumbers, 16_000)).toBeLessThan(8);
  });

  it("reads strings of 8,000 escapes correctly", () => {
    expect(parseJson(`"${"\\n".repeat(8_000)}"`)).toBe("\n".repeat(8_000));
    expect(parseJson(`"${"\\ud83c\\udf3f".repeat(1_300)}"`)).toBe("🌿".repeat(1_300));
  });

  it.each([
    ['{"id":1,"id":2}', "duplicate property 'id'"],
    ['"\\ud800"', "unpaired surrogate"],
    ['"\\u12G4"', "bad \\u escape"],
    ['"\\u\u0010\u0011\u0012\u0013"', "bad \\u escape"],
    ['"\\u00e"', "bad \\u escape"],
    ['"\\u', "bad \\u escape"],
    ["[1,]", "unexpected token"],
    ['{"a":1', "expected ',' or '}'"],
    ['"a\u0001"', "control character"],
    ["01", "unexpected data"],
    ["", "unexpected end"],
    ["NaN", "unexpected token"],
    ['{"a":1} x', "unexpected data"],
    [`${"[".repeat(40)}${"]".repeat(40)}`, "nesting too deep"],
  ])("refuses %j (%s)", (text, reason) => {
    expect(() => parseJson(text)).toThrow(JsonSyntaxError);
    expect(() => parseJson(text)).toThrow(reason);
  });
});
