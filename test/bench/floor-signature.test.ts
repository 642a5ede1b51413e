/**
 * The bench's floors sign their PutItem themselves (bench/floor-handlers.ts), keeping the day's signing
 * key as the handler's signer does. The harness's store (dynalite) does not check signatures, so a wrong
 * one would go unseen in a bench run: here each is checked by the verifier written from AWS's
 * specification, on consecutive calls (the kept key) and across midnight (a new day's key).
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { signedPutItemHeaders } from "../../bench/floor-handlers.ts";
import { sigV4Refusal } from "../support/sigv4-verifier.ts";

const identity = { accessKeyId: "AKIDFLOOR", secretAccessKey: "floor-secret", region: "eu-west-1" };

beforeEach(() => {
  vi.stubEnv("AWS_ACCESS_KEY_ID", identity.accessKeyId);
  vi.stubEnv("AWS_SECRET_ACCESS_KEY", identity.secretAccessKey);
  vi.stubEnv("AWS_REGION", identity.region);
  vi.useFakeTimers({ toFake: ["Date"] });
});

afterEach(() => {
  vi.useRealTimers();
  vi.unstubAllEnvs();
});

function refusal(body: string): string | undefined {
  const headers = signedPutItemHeaders("dynamodb.eu-west-1.amazonaws.com", body);
  return sigV4Refusal(
    { method: "POST", path: "/", headers, body: Buffer.from(body) },
    { ...identity, service: "dynamodb" },
  );
}

describe("the floors' SigV4 signature", () => {
  it("verifies on every call, the day's key kept, and on the next day with that day's key", () => {
    vi.setSystemTime(new Date("2026-11-26T23:59:59Z"));
    expect(refusal('{"id":1}')).toBeUndefined();
    expect(refusal('{"id":2}')).toBeUndefined();
    vi.setSystemTime(new Date("2026-11-27T00:00:01Z"));
    expect(refusal('{"id":3}')).toBeUndefined();
  });
});
