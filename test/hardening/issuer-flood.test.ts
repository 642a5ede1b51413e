/**
 * Floods of unauthenticated tokens cost the function no memory: 20,000 tokens naming the issuer's real
 * key under 20,000 distinct forged issuers (aws-jwt-verify caches the key objects it converts per the
 * token's `iss`, so without the check of `iss` before it the cache grows with each), and 20,000 naming
 * distinct unknown keys, leave the heap within 2 MB of where it started, after a collection.
 */
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { afterAll, beforeAll, expect, test } from "vitest";
import { type Authenticate, createAuthenticator } from "../../lambda/auth/authenticate.ts";
import { KEY_SET_REFETCH_INTERVAL_SECONDS } from "../../lambda/auth/issuer-keys.ts";
import { DEFAULT_REQUIRED_SCOPE } from "../../lambda/defaults.ts";
import { ApiError } from "../../lambda/errors.ts";
import {
  createTokenIssuer,
  generateSigningKey,
  LOCAL_CLIENT_ID,
  type TokenIssuer,
} from "../../local/token-issuer.ts";
import { TEST_ISSUER } from "../../support/harness.ts";
import { type JwksServer, startJwksServer } from "../../support/jwks-server.ts";
import { FakeClock } from "../support/fake-clock.ts";
import { accessTokenClaims, base64url, segments } from "../support/forged-tokens.ts";

const FLOOD = 20_000;
const WARM_UP = 1_000;
const HEAP_GROWTH_LIMIT_BYTES = 2 * 1024 * 1024;

// A full collection on demand, so the heap is measured without garbage: the flag, then a context
// that sees `gc`, without a separate vitest pool for this one file.
setFlagsFromString("--expose-gc");
const collectGarbage = runInNewContext("gc") as () => void;

let issuer: TokenIssuer;
let jwks: JwksServer;
let authenticate: Authenticate;
/** Started at the time the tokens are minted, so that the one verified at the start is in its time window. */
const clock = new FakeClock({ now: Date.now() });

beforeAll(async () => {
  issuer = await createTokenIssuer(TEST_ISSUER, await generateSigningKey());
  jwks = await startJwksServer(issuer.jwks);
  authenticate = createAuthenticator(
    {
      issuer: TEST_ISSUER,
      jwksUrl: jwks.url,
      audiences: [],
      clientIds: [LOCAL_CLIENT_ID],
    },
    { clock },
  );
  await authenticate(`Bearer ${await issuer.mint()}`, DEFAULT_REQUIRED_SCOPE);
});

afterAll(async () => {
  await jwks.close();
});

function heapUsedAfterCollection(): number {
  collectGarbage();
  collectGarbage();
  return process.memoryUsage().heapUsed;
}

/** The heap growth over `FLOOD` refusals of `token(index)`, after `WARM_UP` of them unmeasured. */
async function heapGrowthOver(token: (index: number) => string, refusal: (error: unknown) => boolean) {
  let refused = 0;
  const sendFrom = async (start: number, count: number) => {
    for (let index = start; index < start + count; index++) {
      const failure = await authenticate(`Bearer ${token(index)}`, DEFAULT_REQUIRED_SCOPE).catch(
        (error: unknown) => error,
      );
      if (refusal(failure)) refused++;
    }
  };
  await sendFrom(0, WARM_UP);
  const before = heapUsedAfterCollection();
  await sendFrom(WARM_UP, FLOOD);
  const growth = heapUsedAfterCollection() - before;
  expect(refused).toBe(WARM_UP + FLOOD);
  return growth;
}

/** A token under the issuer's real key and alg with these claims; its signature is not theirs. */
function forged(header: Record<string, unknown>, claims: Record<string, unknown>, signature: string): string {
  return `${base64url(JSON.stringify(header))}.${base64url(JSON.stringify(claims))}.${signature}`;
}

test("20,000 distinct forged issuers naming the real key: 401 each, and the heap stays within 2 MB", async () => {
  const { kid } = issuer.jwks.keys[0] as { kid: string };
  const { signature } = segments(await issuer.mint());
  const claims = accessTokenClaims();
  const growth = await heapGrowthOver(
    (index) =>
      forged({ alg: "RS256", kid }, { ...claims, iss: `https://issuer-${index}.example` }, signature),
    (error) => error instanceof ApiError && error.code === "InvalidToken",
  );
  expect(growth).toBeLessThan(HEAP_GROWTH_LIMIT_BYTES);
});

test("20,000 distinct unknown kids, the key set refetched every 50: the heap stays within 2 MB", async () => {
  const { signature } = segments(await issuer.mint());
  const claims = accessTokenClaims();
  const fetchesBefore = jwks.fetches();
  const growth = await heapGrowthOver(
    (index) => {
      // Past the refetch window now and then, so that unknown kids keep making the key set refetch.
      if (index % 50 === 0) clock.advance(KEY_SET_REFETCH_INTERVAL_SECONDS * 1000);
      return forged({ alg: "RS256", kid: `unknown-${index}` }, claims, signature);
    },
    (error) => error instanceof Error,
  );
  expect(growth).toBeLessThan(HEAP_GROWTH_LIMIT_BYTES);
  expect(jwks.fetches() - fetchesBefore).toBe((WARM_UP + FLOOD) / 50);
  // Every one refused: 401 after a refetch, 503 inside the window.
  await expect(
    authenticate(
      `Bearer ${forged({ alg: "RS256", kid: "unknown" }, claims, signature)}`,
      DEFAULT_REQUIRED_SCOPE,
    ),
  ).rejects.toMatchObject({ status: 503 });
});
