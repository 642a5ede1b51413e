/** A plant id as the caller may give it, made exact before anything is sent. */
export type PlantIdInput = bigint | string | number;

export const INT64_MIN = -(2n ** 63n);
export const INT64_MAX = 2n ** 63n - 1n;
/** 19 digits hold every int64; more (once leading zeros are gone) is out of range. */
const DECIMAL = /^-?0*\d{1,19}$/;

/**
 * The id as a bigint, or a TypeError naming the value: a `number` that is not a safe integer may
 * already have been rounded (2 ** 53 + 1 is 2 ** 53), so it is refused rather than sent.
 */
export function plantIdFrom(value: PlantIdInput): bigint {
  let id: bigint | undefined;
  if (typeof value === "bigint") id = value;
  else if (typeof value === "string" && DECIMAL.test(value)) id = BigInt(value);
  else if (typeof value === "number") {
    if (!Number.isSafeInteger(value)) {
      throw new TypeError(
        `plant id ${String(value)} is a number that is not a safe integer (it may already be rounded): ` +
          "pass ids beyond ±(2^53 - 1) as a bigint or a string of digits",
      );
    }
    id = BigInt(value);
  }
  if (id === undefined || id < INT64_MIN || id > INT64_MAX) {
    throw new TypeError(
      `plant id ${describe(value)} is not an integer between ${INT64_MIN} and ${INT64_MAX} ` +
        "(give a bigint, a string of decimal digits, or a safe-integer number)",
    );
  }
  return id;
}

function describe(value: unknown): string {
  if (typeof value === "string") return JSON.stringify(value.length > 60 ? `${value.slice(0, 60)}…` : value);
  if (typeof value === "bigint") return `${value}n`;
  return String(value);
}
