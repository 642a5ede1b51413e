import { expect } from "vitest";
import type { ApiGatewayResult } from "../../lambda/http/api-gateway.ts";

export interface ErrorBody {
  error: number;
  message: string;
}

/** Asserts the product's error answer: JSON, `{error: <status>, message}` and nothing else. */
export function expectErrorAnswer(result: ApiGatewayResult, status?: number): ErrorBody {
  if (status !== undefined) expect(result.statusCode).toBe(status);
  expect(result.headers["content-type"]).toBe("application/json");
  const body = JSON.parse(result.body) as unknown;
  expect(body).toEqual({ error: result.statusCode, message: expect.any(String) });
  const { message } = body as ErrorBody;
  expect(message.length).toBeGreaterThan(0);
  // No stack trace or source location leaks into an answer.
  expect(message).not.toMatch(/\n\s+at |\.ts:\d+|node_modules/);
  return body as ErrorBody;
}

/**
 * RFC 6750 §3's challenge as this API writes it: `Bearer realm="…"` and its attributes, each a quoted value
 * of the characters §3 allows (printable ASCII but `"` and `\`), so that any client's parser reads it.
 */
export const BEARER_CHALLENGE =
  /^Bearer realm="[\x20\x21\x23-\x5b\x5d-\x7e]*"(?:, (?:error|error_description|scope)="[\x20\x21\x23-\x5b\x5d-\x7e]*")*$/;

/** The `WWW-Authenticate` challenge of RFC 6750: a Bearer challenge, on 401 and 403 alike. */
export function expectBearerChallenge(result: ApiGatewayResult, error?: string): void {
  const challenge = result.headers["www-authenticate"];
  expect(challenge).toMatch(BEARER_CHALLENGE);
  if (error !== undefined) expect(challenge).toContain(`error="${error}"`);
}

export function expectRetryAfter(result: ApiGatewayResult): void {
  expect(result.headers["retry-after"]).toMatch(/^[1-9]\d*$/);
}
