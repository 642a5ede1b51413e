/**
 * fast-check arbitraries for request bodies: NewPlant bodies written every way JSON allows (with
 * what the API must answer for each, as an oracle), and hostile bodies of every other kind.
 */
import fc from "fast-check";
import { PLANT_FIELDS } from "../../lambda/plants/plant.ts";

/** The properties a NewPlant body may hold: any other is unknown, and refused. */
const KNOWN_PROPERTIES: readonly string[] = ["id", ...PLANT_FIELDS.map(({ name }) => name)];

export const INT64_MIN = -(2n ** 63n);
export const INT64_MAX = 2n ** 63n - 1n;
const NAME_MAX = 256;
const TAG_MAX = 64;

/** A JSON number literal, with the exact int64 it denotes, or `undefined` when no int64 is meant. */
export interface IdLiteral {
  text: string;
  exact: bigint | undefined;
}

const int64 = fc.oneof(
  fc.bigInt({ min: INT64_MIN, max: INT64_MAX }),
  // Few significant digits and many trailing zeros: 4415173803113270000 is past 2^53.
  fc
    .tuple(fc.bigInt({ min: -(10n ** 15n), max: 10n ** 15n }), fc.integer({ min: 0, max: 18 }))
    .map(([mantissa, zeros]) => mantissa * 10n ** BigInt(zeros))
    .filter((value) => value >= INT64_MIN && value <= INT64_MAX),
  fc.constantFrom(INT64_MIN, INT64_MAX, 0n, 1n, -1n, 2n ** 53n, 2n ** 53n + 1n, -(2n ** 53n) - 1n),
);

const validIdLiteral: fc.Arbitrary<IdLiteral> = fc.oneof(
  int64.map((exact) => ({ text: exact.toString(), exact })),
  int64.map((exact) => ({ text: `${exact}.0`, exact })),
  int64.map((exact) => ({ text: `${exact}.000e0`, exact })),
  fc
    .tuple(fc.integer({ min: -999_999, max: 999_999 }), fc.integer({ min: 0, max: 12 }))
    .map(([mantissa, exponent]) => ({
      text: `${mantissa}e${exponent}`,
      exact: BigInt(mantissa) * 10n ** BigInt(exponent),
    })),
  fc.constantFrom<IdLiteral>(
    { text: "-0", exact: 0n },
    { text: "1.0", exact: 1n },
    { text: "1e3", exact: 1000n },
    { text: "1E+2", exact: 100n },
    { text: "0.1e1", exact: 1n },
    { text: "12.5e1", exact: 125n },
    { text: "-0.0", exact: 0n },
    { text: "9223372036854775807", exact: INT64_MAX },
    { text: "-9223372036854775808", exact: INT64_MIN },
    { text: "9.223372036854775807e18", exact: INT64_MAX },
    { text: "9007199254740993", exact: 9007199254740993n },
    { text: "-4415173803113270000", exact: -4415173803113270000n },
    { text: "9000000000000000000", exact: 9000000000000000000n },
  ),
);

const invalidIdLiteral: fc.Arbitrary<IdLiteral> = fc
  .constantFrom(
    "1e400",
    "-1e400",
    "1e19",
    "9223372036854775808",
    "-9223372036854775809",
    "99999999999999999999999999999999999999999999999999",
    "1.5",
    "0.1",
    "1e-400",
    "1.0000000000000000001",
    "9007199254740993.5",
    '"1"',
    "true",
    "null",
    "[1]",
    "{}",
  )
  .map((text) => ({ text, exact: undefined }));

/** Texts that are not JSON numbers at all (the body is then not JSON). */
const notJsonNumber = fc.constantFrom(
  "NaN",
  "Infinity",
  "-Infinity",
  "0x10",
  "007",
  "+1",
  "1.",
  ".5",
  "-",
  "1e",
);

const loneSurrogate = fc.integer({ min: 0xd800, max: 0xdfff }).map((code) => String.fromCharCode(code));
const text = (maxLength: number) =>
  fc.oneof(
    { weight: 4, arbitrary: fc.string({ unit: "binary", minLength: 1, maxLength }) },
    { weight: 2, arbitrary: fc.string({ unit: "grapheme", minLength: 1, maxLength }) },
    { weight: 1, arbitrary: fc.string({ unit: fc.oneof(fc.string({ unit: "binary" }), loneSurrogate) }) },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        "",
        " ",
        "\u3000\u00a0",
        "Fern\u0085",
        "a\u007f",
        "\ufeff",
        "bad \ufffd",
        "\u00a0Fern ",
        "__proto__",
        "constructor",
        "\u0000",
        "😀".repeat(maxLength),
      ),
    },
    {
      weight: 1,
      arbitrary: fc.string({ unit: "binary-ascii", minLength: maxLength, maxLength: maxLength + 2 }),
    },
  );

/**
 * What the API accepts as a name or tag, written out independently of the OpenAPI patterns:
 * well-formed, 1 to `max` characters, not only whitespace, no control character, no U+FFFD.
 */
export function validText(value: string, max: number): boolean {
  const characters = [...value];
  const isControl = (char: string) => {
    const code = char.codePointAt(0) ?? 0;
    return code <= 0x1f || (code >= 0x7f && code <= 0x9f);
  };
  return (
    value.isWellFormed() &&
    characters.length >= 1 &&
    characters.length <= max &&
    value.trim() !== "" &&
    !characters.some(isControl) &&
    !value.includes("\uFFFD")
  );
}

const whitespace = fc.constantFrom("", "", " ", "\n", "\t", "\r\n  ");

export interface PlantBody {
  body: string;
  /** What the API must do with it: create exactly this plant, or refuse it with a 400. */
  expected: { id: bigint; name: string; tag?: string } | "bad-request";
  /** A property the answer must name. */
  names?: string;
}

/** Bodies shaped like a NewPlant, spelt every way JSON allows, each with the answer it must get. */
export const plantBody: fc.Arbitrary<PlantBody> = fc
  .record({
    id: fc.option(
      fc.oneof({ weight: 5, arbitrary: validIdLiteral }, { weight: 1, arbitrary: invalidIdLiteral }),
      {
        freq: 12,
      },
    ),
    name: fc.option(text(NAME_MAX), { freq: 12 }),
    tag: fc.option(text(TAG_MAX), { freq: 2 }),
    unknownKey: fc.option(
      fc.oneof(
        fc.constantFrom("__proto__", "constructor", "prototype", "ID", "Name", "toString"),
        fc.string(),
      ),
      { freq: 6 },
    ),
    order: fc.integer({ min: 0, max: 5 }),
    spaces: fc.array(whitespace, { minLength: 12, maxLength: 12 }),
  })
  .map(({ id, name, tag, unknownKey, order, spaces }) => {
    const members: string[] = [];
    const space = (index: number) => spaces[index] ?? "";
    if (id !== null) members.push(`"id"${space(0)}:${space(1)}${id.text}`);
    if (name !== null) members.push(`"name"${space(2)}:${space(3)}${JSON.stringify(name)}`);
    if (tag !== null) members.push(`"tag"${space(4)}:${space(5)}${JSON.stringify(tag)}`);
    const unknown = unknownKey !== null && !KNOWN_PROPERTIES.includes(unknownKey) ? unknownKey : null;
    if (unknown !== null) members.push(`${JSON.stringify(unknown)}:${space(6)}{"id":1,"name":"x"}`);
    rotate(members, order);
    const body = `${space(7)}{${space(8)}${members.join(`${space(9)},${space(10)}`)}${space(11)}}`;
    const exact = id?.exact;
    const valid =
      exact !== undefined &&
      name !== null &&
      validText(name, NAME_MAX) &&
      (tag === null || validText(tag, TAG_MAX)) &&
      unknown === null;
    const expected: PlantBody["expected"] = !valid
      ? "bad-request"
      : tag === null
        ? { id: exact, name }
        : { id: exact, name, tag };
    // The answer can name the unknown property only when the body is JSON at all.
    const parses = [name, tag, unknown].every((value) => value === null || value.isWellFormed());
    return unknown === null || !parses ? { body, expected } : { body, expected, names: unknown };
  });

function rotate<T>(items: T[], by: number): void {
  for (let index = 0; index < by % Math.max(1, items.length); index++) {
    const first = items.shift();
    if (first !== undefined) items.push(first);
  }
}

const nested = (depth: number, inner: string) =>
  depth % 2 === 0
    ? `${"[".repeat(depth)}${inner}${"]".repeat(depth)}`
    : `${'{"a":'.repeat(depth)}${inner}${"}".repeat(depth)}`;

/**
 * A hostile body, as API Gateway hands it over: text; raw bytes of another media type (sent
 * base64-encoded); bytes sent as application/json (delivered as text, each sequence that is not
 * UTF-8 replaced by U+FFFD, with the client's Content-Length); or a base64 string as a broken
 * integration might send it.
 */
export type HostileBody =
  | { text: string }
  | { bytes: Uint8Array }
  | { sentAsJson: Uint8Array }
  | { base64: string };

const asText = (text: string): HostileBody => ({ text });

/** Bytes of a NewPlant body whose name holds `middle`: near misses of a valid body. */
const plantBytesAround = (middle: Uint8Array) =>
  new Uint8Array(Buffer.concat([Buffer.from('{"id":7,"name":"'), middle, Buffer.from('"}')]));

const notUtf8 = fc.oneof(
  fc.uint8Array({ maxLength: 512 }),
  fc.uint8Array({ minLength: 1, maxLength: 40 }).map(plantBytesAround),
  fc
    .constantFrom(
      Buffer.from("caf\xe9", "latin1"),
      Buffer.from([0xff, 0xfe]),
      Buffer.from([0xf0, 0x9f, 0x8c]),
      Buffer.from([0xed, 0xa0, 0x80]),
      Buffer.from([0xc0, 0xaf]),
    )
    .map((bytes) => plantBytesAround(new Uint8Array(bytes))),
  // Around the size limit, the invalid bytes making the text longer than what was sent.
  fc
    .tuple(fc.integer({ min: 16_000, max: 16_600 }), fc.integer({ min: 1, max: 400 }))
    .map(([size, invalid]) =>
      plantBytesAround(
        new Uint8Array(Buffer.concat([Buffer.alloc(size - 18 - invalid, "x"), Buffer.alloc(invalid, 0xff)])),
      ),
    ),
);

const validBase64 = fc
  .string({ maxLength: 60 })
  .map((text) => Buffer.from(JSON.stringify({ id: 8, name: text })).toString("base64"));
const brokenBase64 = fc.oneof(
  fc
    .tuple(validBase64, fc.nat(), fc.constantFrom("*", "-", "_", " ", "\n", "=", "A", "é"))
    .map(([encoded, at, insert]) => {
      const position = at % (encoded.length + 1);
      return encoded.slice(0, position) + insert + encoded.slice(position);
    }),
  validBase64.map((encoded) => encoded.replace(/=+$/, "")),
  validBase64.map((encoded) => `${encoded}eyJ9`),
  fc.string({ unit: "binary-ascii", maxLength: 80 }),
);

/** Everything else a client (or an attacker) may send as a body. */
export const hostileBody: fc.Arbitrary<HostileBody> = fc.oneof(
  fc.json().map(asText),
  fc.jsonValue().map((value) => asText(JSON.stringify({ id: 1, name: "Fern", extra: value }))),
  fc.string({ unit: "binary" }).map(asText),
  fc.string({ unit: fc.oneof(fc.string({ unit: "binary-ascii" }), loneSurrogate) }).map(asText),
  fc.uint8Array({ maxLength: 512 }).map((bytes): HostileBody => ({ bytes })),
  notUtf8.map((sentAsJson): HostileBody => ({ sentAsJson })),
  notUtf8.map((bytes): HostileBody => ({ bytes })),
  brokenBase64.map((base64): HostileBody => ({ base64 })),
  fc.string({ unit: "binary" }).map((text): HostileBody => ({ bytes: new TextEncoder().encode(text) })),
  fc.integer({ min: 0, max: 4000 }).map((depth) => asText(nested(depth, "1"))),
  fc
    .integer({ min: 0, max: 200 })
    .map((depth) => asText(`{"id":${nested(depth, "1")},"name":${nested(depth, '"x"')}}`)),
  fc.integer({ min: 16_300, max: 40_000 }).map((size) => asText(`{"id":7,"name":"${"x".repeat(size)}"}`)),
  fc.integer({ min: 4_000, max: 6_000 }).map((count) => asText(`{"id":7,"name":"${"😀".repeat(count)}"}`)),
  fc.tuple(fc.constantFrom("id", "name", "tag", "__proto__", "constructor"), fc.nat(3)).map(([key, at]) => {
    const members = ['"id":1', '"name":"Fern"', '"tag":"green"'];
    members.splice(at, 0, `"${key}":${key === "id" ? "2" : '"Other"'}`);
    return asText(`{${members.join(",")}}`);
  }),
  fc
    .constantFrom(
      '{"__proto__":{"id":1,"name":"x"}}',
      '{"constructor":{"prototype":{"polluted":true}},"id":1,"name":"x"}',
      '{"__proto__":{"polluted":true},"id":1,"name":"x"}',
      '{"id":1,"name":"x","__proto__":null}',
      '{"id":1,"name":"\\ud800"}',
      '{"id":1,"name":"x"} {"id":2}',
      '{"id":1,"name":"x"',
      '\uFEFF{"id":1,"name":"x"}',
      "",
      " ",
      "null",
      "[]",
      '"id"',
    )
    .map(asText),
  notJsonNumber.map((number) => asText(`{"id":${number},"name":"x"}`)),
  fc
    .tuple(fc.string({ unit: "binary-ascii", maxLength: 3 }), fc.nat(40), fc.nat(3))
    .map(([insert, at, remove]) => {
      const valid = '{"id":123,"name":"Fern","tag":"green"}';
      const position = at % valid.length;
      return asText(valid.slice(0, position) + insert + valid.slice(position + remove));
    }),
);
