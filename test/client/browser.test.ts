/**
 * The client in a real browser: headless Chromium (Debian's `chromium`, driven by playwright-core, which
 * downloads no browser of its own) loads a page from one origin, and through the built client bundle
 * (index.min.js) creates a plant with id 2^63 − 1 at `npm start` on another origin, allowed by PLANTS_CORS_ALLOW_ORIGINS.
 * On the way: the CORS preflight, a token the API refuses (expired) replaced through the page's token
 * function after the 401 `invalid_token` (readable only through the exposed WWW-Authenticate), a 503 from a
 * throttled store whose Retry-After the client waits (readable only through the exposed Retry-After),
 * then the exact id stored. A browser cannot use a client secret safely, so the page gets its tokens from
 * its own origin, as an app gets them from its backend.
 */
import { existsSync } from "node:fs";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type BrowserContext, chromium } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mintLocalToken } from "../../local/local-issuer.ts";
import { DEFAULT_TABLE_NAME } from "../../local/local-settings.ts";
import { buildClient } from "../../tools/build-client.ts";
import { type FaultyLocalRun, startLocalRunOnFaultyStore } from "../support/faulty-local-run.ts";
import { readStoredItem } from "../support/stored-item.ts";

const CHROMIUM_PATH = "/usr/bin/chromium";
const CHROMIUM_FLAGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

const chromiumMissing = !existsSync(CHROMIUM_PATH);
if (chromiumMissing && process.env.CI) {
  // In CI the browser test runs, always: .ci/run installs chromium when it is missing.
  throw new Error(`${CHROMIUM_PATH} is missing in CI: apt-get install -y chromium (as .ci/run does)`);
}
/** The group's name says why it is skipped, for npm test's list of skipped tests (skipped-tests-reporter.ts). */
const SKIP_REASON = chromiumMissing
  ? ` (skipped: ${CHROMIUM_PATH} is missing; apt-get install -y chromium as root)`
  : "";

/** The page loads the built client as an app would, and leaves it on `window` for the test to drive. */
const PAGE = `<!doctype html><html><head><meta charset="utf-8"><title>plants</title>
<script type="module">import * as client from "/client.js"; window.plantStoreClient = client;</script>
</head><body></body></html>`;

let browser: BrowserContext;

/** What the page's `window` holds: the client module it loaded. */
type PageWindow = { plantStoreClient: typeof import("../../client/index.ts") };

/** The client module the page loaded (in the page: vitest's transform must not touch an import() there). */
async function openPage(url: string) {
  const tab = await browser.newPage();
  await tab.goto(url);
  await tab.waitForFunction(() => "plantStoreClient" in window);
  return tab;
}

/** The page's own origin: the page, the built client, and the tokens its "backend" gives (an expired one first). */
async function startPageServer(clientBundle: string, tokenFor: (request: number) => Promise<string>) {
  let tokenRequests = 0;
  const server = createServer(async (request, response) => {
    const files: Record<string, [string, string]> = {
      "/": ["text/html", PAGE],
      "/client.js": ["text/javascript", clientBundle],
    };
    const file = files[request.url ?? ""];
    if (file) return response.writeHead(200, { "content-type": file[0] }).end(file[1]);
    if (request.url !== "/token") return response.writeHead(404).end();
    const token = await tokenFor(++tokenRequests);
    response.writeHead(200, { "content-type": "text/plain", "cache-control": "no-store" }).end(token);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    server,
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    tokenRequests: () => tokenRequests,
  };
}

describe.skipIf(chromiumMissing)(`the client in headless Chromium, from another origin${SKIP_REASON}`, () => {
  let work: string;
  let run: FaultyLocalRun;
  let page: Awaited<ReturnType<typeof startPageServer>>;

  beforeAll(async () => {
    work = await mkdtemp(join(tmpdir(), "plant-store-browser-"));
    // The page's module, its dependencies bundled in: a page resolves no package name.
    const bundle = await readFile(join(await buildClient(join(work, "client")), "index.min.js"), "utf8");
    let dataDir = "";
    page = await startPageServer(bundle, (request) =>
      // The first token has expired: the API refuses it with 401 invalid_token, and the client asks again.
      mintLocalToken(dataDir, request === 1 ? { expiresInSeconds: -60 } : {}),
    );
    run = await startLocalRunOnFaultyStore({
      PLANTS_CORS_ALLOW_ORIGINS: page.origin,
      STORE_MAX_ATTEMPTS: "1",
    });
    dataDir = run.dataDir;
    // A fresh profile (--user-data-dir) of the test's own, removed with the rest of its temp dir.
    browser = await chromium.launchPersistentContext(join(work, "profile"), {
      executablePath: CHROMIUM_PATH,
      args: CHROMIUM_FLAGS,
      headless: true,
    });
  });

  afterAll(async () => {
    await browser?.close();
    if (page) await new Promise((resolve) => page.server.close(resolve));
    await run?.close();
    if (work) await rm(work, { recursive: true, force: true });
  });

  it("creates id 2^63 - 1: preflight, a token replaced after a 401, Retry-After of a 503 waited, the id exact", async () => {
    const tab = await openPage(`${page.origin}/`);
    // The store throttles the first write (one store attempt): the API answers 503 with Retry-After.
    run.faulty.script(["throttle"], "proxy");
    const outcome = await tab.evaluate(async (apiUrl: string) => {
      const { createPlantStoreClient } = (window as unknown as PageWindow).plantStoreClient;
      const waits: number[] = [];
      const clock = {
        now: () => Date.now(),
        setTimer(callback: () => void, ms: number) {
          waits.push(ms);
          const timer = setTimeout(callback, ms);
          return () => clearTimeout(timer);
        },
      };
      const client = createPlantStoreClient({
        baseUrl: apiUrl,
        credentials: { token: async () => (await fetch("/token")).text() },
        clock,
        // Without Retry-After the backoff would be random() × ceiling: 0 here, so any wait is Retry-After's.
        random: () => 0,
        // Timeouts and deadlines far longer than any wait between attempts, so the clock tells them apart.
        retry: { attemptTimeoutMs: 30_000, deadlineMs: 60_000, maxRetryAfterMs: 5000 },
      });
      try {
        const plant = await client.createPlant({ id: 9223372036854775807n, name: "Fern", tag: "fern" });
        return { plant: JSON.stringify(plant), waits };
      } catch (error) {
        return { error: `${(error as Error).name}: ${(error as Error).message}`, waits };
      }
    }, run.server.url);

    expect(outcome).toEqual({ plant: '{"name":"Fern","tag":"fern"}', waits: expect.any(Array) });
    // The 503's Retry-After (whole seconds) was read and waited. The clock's other timers are the attempts'
    // timeouts and the token function's deadline, all over 5 s, the longest wait between attempts.
    const retryAfterWaits = outcome.waits.filter((ms) => ms <= 5000);
    expect(retryAfterWaits).toHaveLength(1);
    expect(retryAfterWaits[0]).toBeGreaterThanOrEqual(1000);
    expect((retryAfterWaits[0] ?? 0) % 1000).toBe(0);
    expect(page.tokenRequests()).toBe(2);
    const log = run.server.output();
    expect(log).toMatch(/^OPTIONS \/plants 204 /m);
    // The POSTs reached the function: one JSON log line each (the local run's own lines are not JSON).
    const functionAnswers = log
      .split("\n")
      .filter((line) => line.startsWith("{"))
      .map((line) => (JSON.parse(line) as { status: number }).status);
    expect(functionAnswers).toEqual([401, 503, 200]);
    expect(await readStoredItem(run.dynamoDb.endpoint, DEFAULT_TABLE_NAME, "9223372036854775807")).toEqual({
      id: { N: "9223372036854775807" },
      name: { S: "Fern" },
      tag: { S: "fern" },
    });
  });

  it("is refused by the browser from an origin npm start does not allow, with an error that says what to check", async () => {
    const refusedOrigin = page.origin.replace("127.0.0.1", "localhost");
    const tab = await openPage(`${refusedOrigin}/`);
    const outcome = await tab.evaluate(async (apiUrl: string) => {
      const { createPlantStoreClient } = (window as unknown as PageWindow).plantStoreClient;
      const client = createPlantStoreClient({
        baseUrl: apiUrl,
        credentials: { token: "t" },
        retry: { maxAttempts: 1 },
      });
      return client.createPlant({ id: 1n, name: "Fern" }).then(
        () => "created",
        (error: Error & { kind: string }) => `${error.name} (${error.kind}): ${error.message}`,
      );
    }, run.server.url);
    // What the browser hides behind "Failed to fetch", with this page's origin, named for the caller to check.
    expect(outcome).toBe(
      `PlantStoreError (network): POST ${run.server.url}/plants: no answer (Failed to fetch). The browser gives no reason: ` +
        `the API may not allow this page's origin ${refusedOrigin} (CORS: add it to the API's allowed origins, ` +
        "corsAllowOrigins for the stack, PLANTS_CORS_ALLOW_ORIGINS for npm start), the server may be down or unreachable, " +
        "or an extension or policy blocked the request; the browser's console says which" +
        // Nothing tells a browser's client whether the POST went out: a create without an answer may be resent.
        "; the plant may have been stored: sending the same create again is safe (200 if it was)",
    );
  });
});
