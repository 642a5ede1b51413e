/**
 * The deploy-time key-set reader (infra/key-set-delivery/key-set-reader.ts), run for real: it GETs a key
 * set from a loopback issuer and answers CloudFormation by a PUT to the request's ResponseURL, which a
 * loopback server receives. The shipped inline bundle is run too, as Lambda loads it (index.js, CommonJS).
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type IncomingHttpHeaders } from "node:http";
import { createRequire } from "node:module";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { exportJWK, generateKeyPair, type JWK } from "jose";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { readerSource } from "../../infra/delivered-key-set.ts";
import {
  type CustomResourceEvent,
  createKeySetReader,
  RESPONSE_LIMIT_BYTES,
} from "../../infra/key-set-delivery/key-set-reader.ts";
import {
  deliverableKeySet,
  environmentValueBytes,
  PRIVATE_MEMBERS,
} from "../../infra/key-set-delivery/public-key-set.ts";
import { type JwksServer, startJwksServer } from "../../support/jwks-server.ts";
import { freePort } from "../support/free-port.ts";

/** What CloudFormation received at the ResponseURL. */
interface Answer {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: {
    Status: string;
    PhysicalResourceId: string;
    StackId: string;
    RequestId: string;
    LogicalResourceId: string;
    Data: { KeySet: string; Digest: string; Summary: string };
  };
}

/** A loopback stand-in for the pre-signed S3 URL: records each PUT; answers `statuses` in turn, then 200. */
async function startResponseReceiver(statuses: number[] = []) {
  const answers: Answer[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      answers.push({
        method: request.method ?? "",
        url: request.url ?? "",
        headers: request.headers,
        body: JSON.parse(Buffer.concat(chunks).toString("utf8")),
      });
      response.writeHead(statuses.shift() ?? 200).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/bucket/stack-response?X-Amz-Signature=secret-signature`,
    answers,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

let publicRsa: JWK;
let privateRsa: JWK;
let publicEc: JWK;
beforeAll(async () => {
  const rsa = await generateKeyPair("RS256", { extractable: true });
  publicRsa = { ...(await exportJWK(rsa.publicKey)), kid: "rsa-1", alg: "RS256", use: "sig" };
  privateRsa = { ...(await exportJWK(rsa.privateKey)), kid: "rsa-1", alg: "RS256", use: "sig" };
  const ec = await generateKeyPair("ES256", { extractable: true });
  publicEc = { ...(await exportJWK(ec.publicKey)), kid: "ec-1", alg: "ES256", key_ops: ["verify"] };
});

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

async function issuerServing(jwks: object): Promise<JwksServer> {
  const issuer = await startJwksServer(jwks);
  cleanups.push(issuer.close);
  return issuer;
}

async function receiver(statuses?: number[]) {
  const started = await startResponseReceiver(statuses);
  cleanups.push(started.close);
  return started;
}

function event(
  requestType: CustomResourceEvent["RequestType"],
  responseUrl: string,
  jwksUrl: string,
  budget = 3000,
): CustomResourceEvent {
  return {
    RequestType: requestType,
    ResponseURL: responseUrl,
    StackId:
      "arn:aws:cloudformation:eu-west-1:123456789012:stack/PlantStore/0a1b2c3d-4e5f-6789-abcd-ef0123456789",
    RequestId: "5d478078-13e9-baf0-464a-7ef285ecc786",
    LogicalResourceId: "KeySetDelivery6F1F9FB9",
    ...(requestType === "Create" ? {} : { PhysicalResourceId: "KeySetDelivery6F1F9FB9-first" }),
    ResourceProperties: {
      ServiceToken: "arn:aws:lambda:eu-west-1:123456789012:function:reader",
      JwksUrl: jwksUrl,
      EnvironmentBudgetBytes: String(budget),
      Synthesis: "2025-01-01T00:00:00.000Z",
    },
  };
}

/**
 * Reads `jwks` from an issuer on an Update and asserts what a key set the function cannot take gets: the
 * deploy goes on (SUCCESS), nothing is delivered, and the summary says why and what instances do instead.
 */
async function expectNothingDelivered(jwks: object, why: string) {
  const issuer = await issuerServing(jwks);
  const cloudFormation = await receiver();
  await instantReader().read(event("Update", cloudFormation.url, issuer.url));
  const body = cloudFormation.answers[0]?.body;
  expect(body?.Status).toBe("SUCCESS");
  expect(body?.Data.KeySet).toBe("");
  expect(body?.Data.Digest).toBe("none");
  expect(body?.Data.Summary).toContain(why);
  expect(body?.Data.Summary).toContain("new instances read the key set from the issuer at cold start");
  return body;
}

/** The reader with waits that return at once, recorded, and its log lines. */
function instantReader() {
  const waits: number[] = [];
  const log: string[] = [];
  const read = createKeySetReader({
    wait: async (ms) => {
      waits.push(ms);
    },
    log: (line) => log.push(line),
  });
  return { read, waits, log };
}

describe("on Create and Update, the key-set reader", () => {
  it("answers SUCCESS with the issuer's keys cut to their public members, as compact JSON", async () => {
    const cognitoLike = {
      keys: [
        { ...publicRsa, x5c: ["MIIC…certificate…"], x5t: "thumbprint" },
        { ...publicEc, ext: true },
      ],
    };
    const issuer = await issuerServing(cognitoLike);
    const cloudFormation = await receiver();
    await instantReader().read(event("Create", cloudFormation.url, issuer.url));

    expect(cloudFormation.answers).toHaveLength(1);
    const [answer] = cloudFormation.answers;
    expect(answer?.method).toBe("PUT");
    expect(answer?.url).toBe("/bucket/stack-response?X-Amz-Signature=secret-signature");
    // The pre-signed URL signs no content type: an empty one, as cfn-response sends.
    expect(answer?.headers["content-type"] ?? "").toBe("");
    expect(answer?.body).toMatchObject({
      Status: "SUCCESS",
      PhysicalResourceId: "KeySetDelivery6F1F9FB9-5d478078-13e9-baf0-464a-7ef285ecc786",
      StackId: expect.stringContaining(":stack/PlantStore/"),
      RequestId: "5d478078-13e9-baf0-464a-7ef285ecc786",
      LogicalResourceId: "KeySetDelivery6F1F9FB9",
    });
    const { KeySet, Digest, Summary } = answer?.body.Data ?? { KeySet: "", Digest: "", Summary: "" };
    expect(JSON.parse(KeySet)).toEqual({
      keys: [
        { kty: "RSA", kid: "rsa-1", alg: "RS256", use: "sig", n: publicRsa.n, e: publicRsa.e },
        {
          kty: "EC",
          kid: "ec-1",
          alg: "ES256",
          crv: "P-256",
          x: publicEc.x,
          y: publicEc.y,
          key_ops: ["verify"],
          ext: true,
        },
      ],
    });
    expect(KeySet).not.toMatch(/\s/);
    expect(Digest).toMatch(/^sha256:[0-9a-f]{16}$/);
    expect(Summary).toMatch(/^2 keys delivered from http:\/\/127\.0\.0\.1:\d+\/\.well-known\/jwks\.json/);
    // The EC key is delivered as published, and the function verifies ES256 tokens with it.
    expect(Summary).not.toMatch(/left out/);
  });

  it("delivers nothing when the issuer publishes no key of kty RSA, EC or OKP, and says why", async () => {
    await expectNothingDelivered(
      { keys: [{ kty: "AKP", kid: "pq-1", alg: "ML-DSA-44" }] },
      "it holds no key of kty RSA, EC or OKP, and the function verifies RS*, ES* and EdDSA tokens, with keys of kty RSA, EC or OKP only",
    );
  });

  it("keeps the physical id on Update, and the same set gives the same digest (no new version)", async () => {
    const issuer = await issuerServing({ keys: [publicRsa] });
    const cloudFormation = await receiver();
    const { read } = instantReader();
    await read(event("Create", cloudFormation.url, issuer.url));
    await read(event("Update", cloudFormation.url, issuer.url));
    issuer.setKeys({ keys: [publicRsa, publicEc] });
    await read(event("Update", cloudFormation.url, issuer.url));

    const [created, same, changed] = cloudFormation.answers.map((answer) => answer.body);
    expect(same?.PhysicalResourceId).toBe("KeySetDelivery6F1F9FB9-first");
    expect(same?.Data.Digest).toBe(created?.Data.Digest);
    expect(changed?.Data.Digest).not.toBe(created?.Data.Digest);
    expect(JSON.parse(changed?.Data.KeySet ?? "").keys).toEqual([publicRsa, publicEc]);
  });

  it.each(PRIVATE_MEMBERS)(
    "delivers nothing when a key publishes the private member %s, and says which",
    async (member) => {
      const leaked = { ...publicRsa, kid: "leaked", [member]: privateRsa.d ?? "secret" };
      const body = await expectNothingDelivered(
        { keys: [publicEc, leaked] },
        `key "leaked" publishes the private member "${member}"`,
      );
      // The private value itself is never repeated.
      expect(JSON.stringify(body)).not.toContain(privateRsa.d);
    },
  );

  it("delivers a set that fits the environment to the byte, and nothing one byte over", async () => {
    const issuer = await issuerServing({ keys: [publicRsa, publicEc] });
    const compact = deliverableKeySet({ keys: [publicRsa, publicEc] });
    const bytes = environmentValueBytes(compact);
    const cloudFormation = await receiver();
    const { read } = instantReader();
    await read(event("Create", cloudFormation.url, issuer.url, bytes));
    await read(event("Create", cloudFormation.url, issuer.url, bytes - 1));

    const [fits, over] = cloudFormation.answers.map((answer) => answer.body.Data);
    expect(fits?.KeySet).toBe(compact);
    expect(over?.KeySet).toBe("");
    expect(over?.Summary).toContain(`it takes ${bytes} bytes in the environment and ${bytes - 1} are left`);
  });

  it("delivers nothing when the answer would pass CloudFormation's 4096-byte limit, whatever the budget", async () => {
    const manyKeys = {
      keys: Array.from({ length: 9 }, (_, index) => ({ ...publicRsa, kid: `rsa-${index}` })),
    };
    // The set alone fits; with the answer's other members it does not.
    expect(environmentValueBytes(deliverableKeySet(manyKeys))).toBeLessThan(RESPONSE_LIMIT_BYTES);
    const issuer = await issuerServing(manyKeys);
    const cloudFormation = await receiver();
    await instantReader().read(event("Create", cloudFormation.url, issuer.url, 100_000));

    const answer = cloudFormation.answers[0];
    expect(answer?.body.Data.KeySet).toBe("");
    expect(answer?.body.Data.Summary).toContain("4096-byte limit");
  });

  it("retries an issuer that answers 500, waiting 1 s, then delivers", async () => {
    const issuer = await issuerServing({ keys: [publicRsa] });
    issuer.setBehaviour("fail");
    const cloudFormation = await receiver();
    const waits: number[] = [];
    const read = createKeySetReader({
      wait: async (ms) => {
        waits.push(ms);
        issuer.setBehaviour("serve");
      },
      log: () => {},
    });
    await read(event("Create", cloudFormation.url, issuer.url));

    expect(issuer.fetches()).toBe(2);
    expect(waits).toEqual([1000]);
    expect(JSON.parse(cloudFormation.answers[0]?.body.Data.KeySet ?? "").keys).toHaveLength(1);
  });

  it("delivers nothing after 4 attempts at an unreachable issuer, waiting 1, 2 and 4 s between them", async () => {
    const unreachable = `http://127.0.0.1:${await freePort()}/.well-known/jwks.json`;
    const cloudFormation = await receiver();
    const { read, waits, log } = instantReader();
    await read(event("Create", cloudFormation.url, unreachable));

    expect(waits).toEqual([1000, 2000, 4000]);
    const data = cloudFormation.answers[0]?.body.Data;
    expect(cloudFormation.answers[0]?.body.Status).toBe("SUCCESS");
    expect(data?.KeySet).toBe("");
    expect(data?.Summary).toContain("no key set after 4 attempts, the last failed: ECONNREFUSED");
    expect(log).toEqual([`Create: ${data?.Summary}`]);
  });

  it.each([
    ["html", "the answer is not JSON"],
    ["truncated", "the answer is not JSON"],
    ["empty-object", "it is not a key set"],
  ] as const)("delivers nothing when the issuer answers 200 with %s", async (behaviour, reason) => {
    const issuer = await issuerServing({ keys: [publicRsa] });
    issuer.setBehaviour(behaviour);
    const cloudFormation = await receiver();
    await instantReader().read(event("Create", cloudFormation.url, issuer.url));

    expect(issuer.fetches()).toBe(1);
    expect(cloudFormation.answers[0]?.body.Data.KeySet).toBe("");
    expect(cloudFormation.answers[0]?.body.Data.Summary).toContain(reason);
  });

  it("retries its answer when the ResponseURL fails, and names only the URL's host when it gives up", async () => {
    const issuer = await issuerServing({ keys: [publicRsa] });
    const flaky = await receiver([503]);
    await instantReader().read(event("Create", flaky.url, issuer.url));
    expect(flaky.answers.map(({ body }) => body.Status)).toEqual(["SUCCESS", "SUCCESS"]);

    const broken = await receiver([500, 500, 500]);
    const failure = instantReader().read(event("Create", broken.url, issuer.url));
    await expect(failure).rejects.toThrow(
      /^could not answer CloudFormation at 127\.0\.0\.1:\d+: answered 500$/,
    );
    await failure.catch((error: Error) => expect(error.message).not.toContain("secret-signature"));
    expect(broken.answers).toHaveLength(3);
  });
});

describe("on Delete, the key-set reader", () => {
  it("answers SUCCESS with the same physical id, without asking the issuer", async () => {
    const issuer = await issuerServing({ keys: [publicRsa] });
    const cloudFormation = await receiver();
    await instantReader().read(event("Delete", cloudFormation.url, issuer.url));

    expect(issuer.fetches()).toBe(0);
    expect(cloudFormation.answers[0]?.body).toMatchObject({
      Status: "SUCCESS",
      PhysicalResourceId: "KeySetDelivery6F1F9FB9-first",
    });
  });
});

describe("the inline code the template ships", () => {
  const directory = mkdtempSync(join(tmpdir(), "key-set-reader-"));
  afterAll(() => rmSync(directory, { recursive: true, force: true }));

  it("runs as Lambda loads it (index.js, CommonJS, exports.handler) and delivers the key set", async () => {
    const source = readerSource();
    writeFileSync(join(directory, "index.js"), source);
    const { handler } = createRequire(join(directory, "index.js"))("./index.js") as {
      handler: (event: CustomResourceEvent) => Promise<void>;
    };
    const issuer = await issuerServing({ keys: [{ ...publicRsa, x5c: ["certificate"] }] });
    const cloudFormation = await receiver();
    await handler(event("Create", cloudFormation.url, issuer.url));

    expect(JSON.parse(cloudFormation.answers[0]?.body.Data.KeySet ?? "")).toEqual({ keys: [publicRsa] });
    // Small: no dependency beyond Node's own modules.
    expect(source.length).toBeLessThan(8_000);
  });
});
