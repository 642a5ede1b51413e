/**
 * How the stack's options are read from CDK context: each kind of value, and the refusal of one as a
 * ContextError whose message names the option and what is wrong.
 */
import { RegionInfo } from "aws-cdk-lib/region-info";

/** A context value or combination the stack refuses; its message names the option and what is wrong. */
export class ContextError extends Error {
  override name = "ContextError";
}

/** Reads one context value; `app.node.tryGetContext` fits. */
export type ContextReader = (key: string) => unknown;

/** `domainName`, the certificate option named, and `hostedZoneId`, the two ids checked for their shape. */
export function domainOptions(read: ContextReader, certificateKey: string): (string | undefined)[] {
  const [domainName, certificate, hostedZoneId] = ["domainName", certificateKey, "hostedZoneId"].map((key) =>
    text(read, key),
  );
  if (domainName !== undefined) {
    check(
      isHostName(domainName),
      "domainName",
      "a fully qualified host name like api.example.com",
      domainName,
    );
  }
  if (domainName !== undefined && hostedZoneId !== undefined) {
    const zoneShape = /^Z[A-Z0-9]{1,31}$/.test(hostedZoneId);
    check(zoneShape, "hostedZoneId", "a Route 53 hosted zone id like Z0123456789ABC", hostedZoneId);
  }
  return [domainName, certificate, hostedZoneId];
}

/** The Region of an ACM certificate ARN; refused when it is none, or names no AWS Region. */
export function certificateRegion(key: string, arn: string): string {
  const region = /^arn:aws[a-z-]*:acm:([a-z0-9-]+):\d{12}:certificate\/[A-Za-z0-9-]+$/.exec(arn)?.[1] ?? "";
  const known = RegionInfo.regions.some(({ name }) => name === region);
  check(
    known,
    key,
    "an ACM certificate ARN in an AWS Region (arn:aws:acm:<region>:<account>:certificate/<id>)",
    arn,
  );
  return region;
}

/** Refuses any of `options` that is set, since it only applies with `key`. */
export function onlyWith(
  key: string,
  feature: string,
  options: Record<string, string | undefined>,
): undefined {
  const stray = Object.entries(options).find(([, value]) => value !== undefined);
  if (stray) throw new ContextError(`Context "${stray[0]}" only applies with "${key}" (${feature})`);
  return undefined;
}

/** Lowercase labels of letters, digits and inner hyphens, at least two of them; no trailing dot. */
export function isHostName(value: string): boolean {
  const labels = value.split(".");
  return (
    value.length <= 253 &&
    labels.length >= 2 &&
    labels.every((label) => /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/.test(label))
  );
}

export function check(ok: boolean, key: string, what: string, value: string): void {
  if (!ok) throw new ContextError(`Context "${key}" must be ${what}, got "${value}"`);
}

/**
 * A string option, trimmed; empty is unset. Here as in boolean() and integer(), `null` (cdk.json's way to
 * write a key without a value) is unset, as a key left out.
 */
export function text(read: ContextReader, key: string): string | undefined {
  const value = read(key) ?? undefined;
  if (value === undefined) return undefined;
  if (typeof value !== "string") throw new ContextError(`Context "${key}" must be a string`);
  return value.trim() || undefined;
}

export function oneOf<T extends string>(
  read: ContextReader,
  key: string,
  values: readonly T[],
  fallback: T,
): T {
  const value = text(read, key) ?? fallback;
  const known = values.find((candidate) => candidate === value);
  check(known !== undefined, key, values.join(" or "), value);
  return known ?? fallback;
}

/** `true` or `false`: a string from `-c key=value`, possibly a boolean from cdk.json. */
export function boolean(read: ContextReader, key: string, fallback: boolean): boolean {
  const value = read(key) ?? undefined;
  if (value === undefined) return fallback;
  if (value === true || value === "true" || value === false || value === "false")
    return String(value) === "true";
  throw new ContextError(`Context "${key}" must be true or false, got ${JSON.stringify(value)}`);
}

/** Context from `-c key=value` arrives as a string, from cdk.json possibly as a number. */
export function integer(read: ContextReader, key: string, min: number, max: number): number | undefined {
  const value = read(key) ?? undefined;
  if (value === undefined) return undefined;
  const parsed = typeof value === "string" && /^\d+$/.test(value.trim()) ? Number(value) : value;
  if (typeof parsed !== "number" || !Number.isInteger(parsed) || parsed < min || parsed > max) {
    throw new ContextError(
      `Context "${key}" must be an integer from ${min} to ${max}, got ${JSON.stringify(value)}`,
    );
  }
  return parsed;
}

export function parseUrl(value: string): URL | undefined {
  return URL.canParse(value) ? new URL(value) : undefined;
}
