/**
 * client/README.md and the client agree: each number it states is the code's value (token lifetimes,
 * retry defaults, the answer cap, the page bundle's budget, the tarball's version), its table of error
 * kinds is the PlantStoreErrorKind union, no more and no less, and its table of options has a row for
 * each option of PlantStoreClientOptions and RetryOptions, no more and no less, with the retry defaults.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import {
  DEFAULT_RETRY_POLICY,
  MAX_ANSWER_BYTES,
  type PlantStoreClientOptions,
  type RetryOptions,
} from "../../client/index.ts";
import { EXPIRY_MARGIN_MS, MAX_LIFETIME_MS, UNKNOWN_LIFETIME_MS } from "../../client/tokens.ts";
import { GZIPPED_BUDGET_BYTES, MINIFIED_BUDGET_BYTES } from "../../tools/build-client.ts";

const read = (path: string) => readFileSync(new URL(`../../${path}`, import.meta.url), "utf8");
/** The README with its line breaks as spaces, so that rewrapping a sentence changes nothing here. */
const readme = read("client/README.md").replace(/\s+/g, " ");

/** The numbers the README states with these words around them (`N` where the number stands). */
function stated(words: string): number[] {
  const [before, after] = words.split("N").map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"));
  const found = [...readme.matchAll(new RegExp(`${before}(\\d+(?:\\.\\d+)?)${after}`, "g"))];
  expect(found.length, `client/README.md says "${words}"`).toBeGreaterThan(0);
  return found.map((match) => Number(match[1]));
}

describe("client/README.md states the client's own numbers", () => {
  it.each([
    ["the token is kept N minutes", UNKNOWN_LIFETIME_MS / 60_000],
    ["kept N minutes since its lifetime is unknown", UNKNOWN_LIFETIME_MS / 60_000],
    ["no token is kept longer than N hours", MAX_LIFETIME_MS / 3_600_000],
    ["a tenth of its life or N s before", EXPIRY_MARGIN_MS / 1000],
    ["At most `retry.maxAttempts` POSTs per call (N)", DEFAULT_RETRY_POLICY.maxAttempts],
    ["within `retry.deadlineMs` (N s", DEFAULT_RETRY_POLICY.deadlineMs / 1000],
    ["a timeout (`retry.attemptTimeoutMs`, N s)", DEFAULT_RETRY_POLICY.attemptTimeoutMs / 1000],
    ["full-jitter backoff (N ms doubling", DEFAULT_RETRY_POLICY.baseDelayMs],
    ["doubling up to N s)", DEFAULT_RETRY_POLICY.maxDelayMs / 1000],
    ["`Retry-After` (up to N s)", DEFAULT_RETRY_POLICY.maxRetryAfterMs / 1000],
    ["Answers are read up to N KiB", MAX_ANSWER_BYTES / 1024],
    ["stays under N KiB", MINIFIED_BUDGET_BYTES / 1024],
    ["N KiB gzip-compressed", GZIPPED_BUDGET_BYTES / 1024],
  ])('"%s": %d', (words, value) => {
    expect(stated(words)).toEqual(stated(words).map(() => value));
  });

  it("names the tarball of the package's version", () => {
    const { version } = JSON.parse(read("client/package.json")) as { version: string };
    const named = [...readme.matchAll(/plant-store-client-(\d+\.\d+\.\d+)\.tgz/g)].map((match) => match[1]);
    expect(named.length).toBeGreaterThan(0);
    expect(new Set(named)).toEqual(new Set([version]));
  });
});

it("lists every kind of error, and only those, in its table", () => {
  const union = read("client/errors.ts").match(/export type PlantStoreErrorKind =([^;]+);/)?.[1] ?? "";
  const kinds = [...union.matchAll(/"([a-z-]+)"/g)].map((match) => match[1]);
  const row = readme.match(/\| `kind` \|([^|]+)\|/)?.[1] ?? "";
  const documented = [...row.matchAll(/`([a-z-]+)`/g)].map((match) => match[1]);
  expect(kinds.length).toBeGreaterThan(5);
  expect(documented.sort()).toEqual(kinds.sort());
});

/** Every option, as the compiler sees them: one the types gain or lose is a type error here. */
const CLIENT_OPTIONS: Record<keyof PlantStoreClientOptions, true> = {
  baseUrl: true,
  credentials: true,
  fetch: true,
  retry: true,
  signal: true,
  clock: true,
  random: true,
};
const RETRY_OPTIONS: Record<keyof RetryOptions, true> = {
  maxAttempts: true,
  deadlineMs: true,
  attemptTimeoutMs: true,
  baseDelayMs: true,
  maxDelayMs: true,
  maxRetryAfterMs: true,
};

it("has a row for every option, and only those, with each retry setting's default", () => {
  const section =
    read("client/README.md")
      .split(/^## /m)
      .find((part) => part.startsWith("Options\n")) ?? "";
  const rows = new Map(
    [...section.matchAll(/^\| `([\w.]+)` \| ([^|]+) \|/gm)].map((match) => [match[1], match[2]?.trim()]),
  );
  const options = [
    ...Object.keys(CLIENT_OPTIONS).filter((name) => name !== "retry"),
    ...Object.keys(RETRY_OPTIONS).map((name) => `retry.${name}`),
  ];
  expect([...rows.keys()].sort()).toEqual(options.sort());
  const inMs = (stated: string | undefined) => {
    const [, value, unit] = /^(\d+) ?(ms|s)?$/.exec(stated ?? "") ?? [];
    return Number(value) * (unit === "s" ? 1000 : 1);
  };
  for (const [name, value] of Object.entries(DEFAULT_RETRY_POLICY)) {
    expect(inMs(rows.get(`retry.${name}`)), `retry.${name}`).toBe(value);
  }
});
