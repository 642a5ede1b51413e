/**
 * A strict JSON parser (RFC 8259, with the I-JSON rules of RFC 7493) that never rounds an integer, where
 * `JSON.parse` turns 9007199254740993 into 9007199254740992 (and Node 20 has no source-text access):
 * - an integer value (written `12`, `1.2e1` or `12.0`) comes back as a `number` when it is a safe
 *   integer, and as a `bigint` otherwise, digit for digit (very long ones, far past int64, as an
 *   inexact `number`, which no int64 check accepts);
 * - any other number comes back as a `number`, or as NaN when its nearest double is an integer
 *   (`1e-400`, `1.0000000000000000001`), so that no integer check can accept a rounded value.
 * Objects have no prototype (a `__proto__` key is an ordinary key), duplicate keys, unpaired
 * surrogates and nesting deeper than `maxDepth` are refused.
 */
export type JsonValue =
  | null
  | boolean
  | number
  | bigint
  | string
  | JsonValue[]
  | { [key: string]: JsonValue };

/** Not JSON: its message says why (`reason`) and where, as `… at position 12`. */
export class JsonSyntaxError extends Error {
  constructor(
    readonly reason: string,
    position: number,
  ) {
    super(`${reason} at position ${position}`);
    this.name = "JsonSyntaxError";
  }
}

/** More digits than this is far outside int64; such integers are not worth an exact BigInt. */
const MAX_EXACT_INTEGER_DIGITS = 40;
const MIN_SAFE = BigInt(Number.MIN_SAFE_INTEGER);
const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);
const NUMBER_PATTERN = /-?(0|[1-9]\d*)(?:\.(\d+))?(?:[eE]([+-]?\d+))?/y;
const MINUS = 0x2d;
const BACKSLASH = 0x5c;
const ZERO = 0x30;
// biome-ignore lint/suspicious/noControlCharactersInRegex: JSON strings may not hold raw control characters.
const PLAIN_STRING_CHARS = /[^"\\\u0000-\u001f]*/y;
const ESCAPES: Record<string, string> = {
  '"': '"',
  "\\": "\\",
  "/": "/",
  b: "\b",
  f: "\f",
  n: "\n",
  r: "\r",
  t: "\t",
};

export function parseJson(json: string, depthLimit = 32): JsonValue {
  text = json;
  position = 0;
  maxDepth = depthLimit;
  const value = readValue(0);
  skipWhitespace();
  if (position !== text.length) fail("unexpected data after the JSON value");
  return value;
}

// The parse in progress. parseJson is synchronous and calls nothing that could parse again meanwhile, so
// one set of module variables serves every parse; plain functions over them minify far smaller than a class.
let text = "";
let position = 0;
let maxDepth = 32;

const fail = (reason: string): never => {
  throw new JsonSyntaxError(reason, position);
};

const skipWhitespace = (): void => {
  for (;;) {
    const code = text.charCodeAt(position);
    if (code === 0x20 || code === 0x0a || code === 0x0d || code === 0x09) position++;
    else return;
  }
};

const readValue = (depth: number): JsonValue => {
  skipWhitespace();
  switch (text[position]) {
    case "{":
      return readObject(depth + 1);
    case "[":
      return readArray(depth + 1);
    case '"':
      return readString();
    case "t":
      return readLiteral("true", true);
    case "f":
      return readLiteral("false", false);
    case "n":
      return readLiteral("null", null);
    case undefined:
      return fail("unexpected end of input");
    default:
      return readNumber();
  }
};

const readLiteral = (literal: string, value: JsonValue): JsonValue => {
  if (!text.startsWith(literal, position)) fail("unexpected token");
  position += literal.length;
  return value;
};

const readString = (): string => {
  position++; // opening quote
  let result = "";
  for (;;) {
    if (text.charCodeAt(position) !== BACKSLASH) {
      PLAIN_STRING_CHARS.lastIndex = position;
      PLAIN_STRING_CHARS.exec(text);
      result += text.slice(position, PLAIN_STRING_CHARS.lastIndex);
      position = PLAIN_STRING_CHARS.lastIndex;
    }
    const char = text[position];
    if (char === '"') {
      position++;
      if (!result.isWellFormed()) fail("string with an unpaired surrogate");
      return result;
    }
    if (char === undefined) fail("unterminated string");
    if (char !== "\\") fail("control character in string");
    result += readEscape();
  }
};

/** The character a backslash escape at `position` stands for. */
const readEscape = (): string => {
  const escapeLetter = text[position + 1] ?? "";
  if (escapeLetter === "u") {
    const codeUnit = hexCodeUnit(text, position + 2);
    if (codeUnit < 0) fail("bad \\u escape");
    position += 6;
    return String.fromCharCode(codeUnit);
  }
  const unescaped = ESCAPES[escapeLetter];
  if (unescaped === undefined) return fail("bad escape");
  position += 2;
  return unescaped;
};

const readNumber = (): number | bigint => {
  NUMBER_PATTERN.lastIndex = position;
  const match = NUMBER_PATTERN.exec(text);
  if (match === null) return fail("unexpected token");
  const lexeme = match[0];
  position += lexeme.length;
  return exactNumber(lexeme, match[1] ?? "", match[2] ?? "", match[3]);
};

const readObject = (depth: number): JsonValue => {
  const object: { [key: string]: JsonValue } = Object.create(null);
  if (opensEmpty(depth, "}")) return object;
  for (;;) {
    skipWhitespace();
    if (text[position] !== '"') fail("expected a property name");
    const keyPosition = position;
    const key = readString();
    if (Object.hasOwn(object, key)) {
      position = keyPosition;
      fail(`duplicate property '${key}'`);
    }
    skipWhitespace();
    if (text[position] !== ":") fail("expected ':'");
    position++;
    object[key] = readValue(depth);
    if (closes("}")) return object;
  }
};

const readArray = (depth: number): JsonValue => {
  const array: JsonValue[] = [];
  if (opensEmpty(depth, "]")) return array;
  for (;;) {
    array.push(readValue(depth));
    if (closes("]")) return array;
  }
};

/** Past an opening bracket: true, and past the closing one too, when the container is empty. */
const opensEmpty = (depth: number, closing: "}" | "]"): boolean => {
  if (depth > maxDepth) fail("nesting too deep");
  position++;
  skipWhitespace();
  if (text[position] !== closing) return false;
  position++;
  return true;
};

/** After a member or an element: true past the closing bracket, false past a comma. */
const closes = (closing: "}" | "]"): boolean => {
  skipWhitespace();
  const separator = text[position];
  if (separator !== closing && separator !== ",") fail(`expected ',' or '${closing}'`);
  position++;
  return separator === closing;
};

/** The code unit written as 4 hex digits at `start`, or -1 when they are not 4 hex digits. */
function hexCodeUnit(text: string, start: number): number {
  let value = 0;
  for (let index = start; index < start + 4; index++) {
    const code = text.charCodeAt(index); // NaN past the end: no digit
    const letter = code | 0x20; // lower-cases A-F
    const digit =
      code >= 0x30 && code <= 0x39 ? code - 0x30 : letter >= 0x61 && letter <= 0x66 ? letter - 0x57 : -1;
    if (digit < 0) return -1;
    value = value * 16 + digit;
  }
  return value;
}

/**
 * The value of a number lexeme, exact for integers. Linear in the lexeme's length: a body may hold
 * a number of 16,000 digits, so no regular expression that can rescan (`/0+$/`) is used here.
 */
function exactNumber(
  lexeme: string,
  integerPart: string,
  fraction: string,
  exponentText: string | undefined,
): number | bigint {
  const negative = lexeme.charCodeAt(0) === MINUS;
  // Up to 15 digits with neither fraction nor exponent: exact as a double, and the common case.
  if (fraction === "" && exponentText === undefined && integerPart.length <= 15) return Number(lexeme);
  const digits = integerPart + fraction;
  let first = 0;
  while (first < digits.length && digits.charCodeAt(first) === ZERO) first++;
  if (first === digits.length) return negative ? -0 : 0;
  let last = digits.length - 1;
  while (digits.charCodeAt(last) === ZERO) last--;
  const trailingZeros = digits.length - 1 - last;
  const scale = Number(exponentText ?? "0") - fraction.length + trailingZeros;

  if (scale < 0) {
    const nearest = Number(lexeme);
    return Number.isInteger(nearest) ? Number.NaN : nearest;
  }
  const significantDigits = last + 1 - first;
  if (significantDigits + scale > MAX_EXACT_INTEGER_DIGITS) return Number(lexeme);
  const exact = BigInt(`${negative ? "-" : ""}${digits.slice(first, last + 1)}${"0".repeat(scale)}`);
  return exact >= MIN_SAFE && exact <= MAX_SAFE ? Number(exact) : exact;
}
