/**
 * The key set delivered with the deployment (infra/delivered-key-set.ts), in the synthesized templates:
 * the Cognito pool's set read at deploy time into the handler's JWKS_JSON, a brought issuer's read the same
 * way, or `-c jwks=<file>` delivered as checked at synth.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { ContextError } from "../../infra/config.ts";
import { DEPLOY_TIME_VALUE_BYTES, readerSource } from "../../infra/delivered-key-set.ts";
import { WORST_CASE_RUN_MS } from "../../infra/key-set-delivery/key-set-reader.ts";
import {
  deliverableKeySet,
  ENVIRONMENT_LIMIT_BYTES,
  environmentValueBytes,
} from "../../infra/key-set-delivery/public-key-set.ts";
import type { Template } from "../../infra/rules/deploy-rule.ts";
import { OUTPUT_KEYS } from "../../infra/stack-outputs.ts";
import {
  cognitoIdpUrlOf,
  ISSUER_KEY_SET_FILE,
  synthesisError,
  synthesizedTemplate,
} from "../support/synthesize.ts";

type Resource = { Type: string; Properties: Record<string, unknown>; DependsOn?: unknown };

function resources(template: Template): Record<string, Resource> {
  return (template.Resources ?? {}) as Record<string, Resource>;
}

/** The one resource whose logical id is `prefix` and CDK's 8-digit hash. */
function named(template: Template, prefix: string): [string, Resource] {
  const matches = Object.entries(resources(template)).filter(([id]) =>
    new RegExp(`^${prefix}[0-9A-F]{8}$`).test(id),
  );
  if (matches.length !== 1 || matches[0] === undefined) throw new Error(`expected one ${prefix}*`);
  return matches[0];
}

function outputs(template: Template): Record<string, { Value?: unknown }> {
  return (template as { Outputs?: Record<string, { Value?: unknown }> }).Outputs ?? {};
}

function handlerVariables(template: Template): Record<string, unknown> {
  const [, handler] = named(template, "Handler");
  return (handler.Properties.Environment as { Variables: Record<string, unknown> }).Variables;
}

const synthesizedAfter = new Date();
const cognito = synthesizedTemplate();
const synthesizedBefore = new Date();

describe("with the stack's own Cognito pool", () => {
  const [readerResourceId, keySetResource] = named(cognito, "KeySetDelivery");
  const [readerId, reader] = named(cognito, "KeySetDeliveryReader");

  it("hands the handler the key set the custom resource read, in JWKS_JSON", () => {
    expect(keySetResource.Type).toBe("Custom::DeliveredKeySet");
    expect(handlerVariables(cognito).JWKS_JSON).toEqual({ "Fn::GetAtt": [readerResourceId, "KeySet"] });
  });

  it("reads it after the pool exists, where the handler reads it without JWKS_URL", () => {
    const [poolId] = named(cognito, "TokenIssuerUserPool");
    expect(keySetResource.Properties.JwksUrl).toEqual(
      cognitoIdpUrlOf("/", { Ref: poolId }, "/.well-known/jwks.json"),
    );
    expect(handlerVariables(cognito).JWKS_URL).toBeUndefined();
  });

  it("reads it again at every deploy: a property that changes with every synth", () => {
    const synthesis = Date.parse(String(keySetResource.Properties.Synthesis));
    expect(synthesis).toBeGreaterThanOrEqual(synthesizedAfter.getTime());
    expect(synthesis).toBeLessThanOrEqual(synthesizedBefore.getTime());
  });

  it("publishes a new version when the set read differs: the version's description holds its digest", () => {
    const [, version] =
      Object.entries(resources(cognito)).find(([, r]) => r.Type === "AWS::Lambda::Version") ?? [];
    expect(version?.Properties.Description).toEqual({
      "Fn::Join": [" ", ["JWKS_JSON:", { "Fn::GetAtt": [readerResourceId, "Digest"] }]],
    });
  });

  it("gives the reader what the environment has left of Lambda's 4 KB, measured as Lambda measures it", () => {
    const others = Object.fromEntries(
      Object.entries(handlerVariables(cognito))
        .filter(([name]) => name !== "JWKS_JSON")
        .map(([name, value]) => [
          name,
          typeof value === "string" ? value : "x".repeat(DEPLOY_TIME_VALUE_BYTES),
        ]),
    );
    const used = Buffer.byteLength(JSON.stringify({ ...others, JWKS_JSON: "" }));
    const budget = keySetResource.Properties.EnvironmentBudgetBytes;
    expect(budget).toBe(ENVIRONMENT_LIMIT_BYTES - used);
    // Cognito publishes two RSA keys: they fit with room to spare.
    const twoKeys = deliverableKeySet(JSON.parse(readFileSync(ISSUER_KEY_SET_FILE, "utf8")));
    expect(environmentValueBytes(twoKeys)).toBeLessThan(Number(budget) / 2);
  });

  it("runs the reader tested in key-set-reader.test.ts, inline, answering before Lambda or CloudFormation give up", () => {
    expect(keySetResource.Properties.ServiceToken).toEqual({ "Fn::GetAtt": [readerId, "Arn"] });
    expect(reader.Properties).toMatchObject({
      Runtime: "nodejs24.x",
      Handler: "index.handler",
      Code: { ZipFile: readerSource() },
      MemorySize: 128,
    });
    const timeoutSeconds = Number(reader.Properties.Timeout);
    expect(timeoutSeconds * 1000).toBeGreaterThan(WORST_CASE_RUN_MS);
    expect(Number(keySetResource.Properties.ServiceTimeout)).toBeGreaterThan(timeoutSeconds);
  });

  it("lets the reader write to its own log group and nothing else", () => {
    const [, role] = named(cognito, "KeySetDeliveryReaderRole");
    const [logGroupId] = named(cognito, "KeySetDeliveryReaderLogGroup");
    expect(role.Properties.ManagedPolicyArns).toBeUndefined();
    expect(role.Properties.Policies).toEqual([
      {
        PolicyName: "WriteOwnLogGroup",
        PolicyDocument: {
          Version: "2012-10-17",
          Statement: [
            {
              Effect: "Allow",
              Action: ["logs:CreateLogStream", "logs:PutLogEvents"],
              Resource: { "Fn::GetAtt": [logGroupId, "Arn"] },
            },
          ],
        },
      },
    ]);
    const policiesOfReader = Object.values(resources(cognito)).filter(
      (r) =>
        r.Type === "AWS::IAM::Policy" && JSON.stringify(r.Properties.Roles).includes("KeySetDeliveryReader"),
    );
    expect(policiesOfReader).toEqual([]);
  });

  it("outputs what was delivered, or why nothing was", () => {
    expect(outputs(cognito)[OUTPUT_KEYS.deliveredKeySet]).toMatchObject({
      Value: { "Fn::GetAtt": [readerResourceId, "Summary"] },
    });
  });
});

describe("with an issuer you bring", () => {
  it("reads its key set at deploy time from jwksUrl, or from the issuer's well-known path", () => {
    const withUrl = synthesizedTemplate({
      issuer: "https://login.example.com/tenant/",
      audience: "api://plants",
      jwksUrl: "https://login.example.com/tenant/keys",
    });
    expect(named(withUrl, "KeySetDelivery")[1].Properties.JwksUrl).toBe(
      "https://login.example.com/tenant/keys",
    );
    expect(handlerVariables(withUrl).JWKS_JSON).toEqual({
      "Fn::GetAtt": [named(withUrl, "KeySetDelivery")[0], "KeySet"],
    });
    const withoutUrl = synthesizedTemplate({
      issuer: "https://login.example.com/tenant/",
      audience: "api://plants",
    });
    expect(named(withoutUrl, "KeySetDelivery")[1].Properties.JwksUrl).toBe(
      "https://login.example.com/tenant/.well-known/jwks.json",
    );
  });

  describe("and -c jwks=<file>", () => {
    const directory = mkdtempSync(join(tmpdir(), "jwks-context-"));
    afterAll(() => rmSync(directory, { recursive: true, force: true }));
    const file = (name: string, content: string) => {
      const path = join(directory, name);
      writeFileSync(path, content);
      return path;
    };
    const brought = { issuer: "https://login.example.com/tenant", audience: "api://plants" };
    const published = JSON.parse(readFileSync(ISSUER_KEY_SET_FILE, "utf8")) as { keys: object[] };

    it("delivers EC and OKP keys too, saying how many keys of another kty the function leaves out", () => {
      const ec = { kty: "EC", kid: "ec-1", crv: "P-256", x: "f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU" };
      const other = { kty: "AKP", kid: "pq-1", alg: "ML-DSA-44" };
      const withEc = synthesizedTemplate({
        ...brought,
        jwks: file("with-ec.json", JSON.stringify({ keys: [...published.keys, ec, other] })),
      });
      expect(outputs(withEc)[OUTPUT_KEYS.deliveredKeySet]?.Value).toMatch(
        /^4 keys delivered from .*with-ec\.json \(checked at synth\); 1 of them of another kty, left out: the function verifies RS\*, ES\* and EdDSA tokens, with keys of kty RSA, EC or OKP only$/,
      );
      const ecAlone = synthesizedTemplate({
        ...brought,
        jwks: file("ec.json", JSON.stringify({ keys: [ec] })),
      });
      expect(outputs(ecAlone)[OUTPUT_KEYS.deliveredKeySet]?.Value).toMatch(
        /^1 keys delivered from .*\(checked at synth\)$/,
      );
    });

    it("delivers the file's public keys as checked at synth, with no reader and no deploy-time read", () => {
      const withCertificates = {
        keys: published.keys.map((key) => ({ ...key, x5c: ["MIIC…"], x5t: "thumbprint" })),
      };
      const template = synthesizedTemplate({
        ...brought,
        jwks: file("set.json", JSON.stringify(withCertificates)),
      });
      expect(handlerVariables(template).JWKS_JSON).toBe(deliverableKeySet(published));
      expect(Object.values(resources(template)).map((r) => r.Type)).not.toContain("Custom::DeliveredKeySet");
      expect(Object.keys(resources(template)).filter((id) => id.startsWith("KeySetDelivery"))).toEqual([]);
      expect(outputs(template)[OUTPUT_KEYS.deliveredKeySet]?.Value).toMatch(
        /^2 keys delivered from .*set\.json/,
      );
    });

    it("refuses a file holding a private key, naming the member", () => {
      const leaked = { keys: [{ ...published.keys[0], d: "private-exponent" }] };
      const error = synthesisError({ ...brought, jwks: file("leaked.json", JSON.stringify(leaked)) });
      expect(error).toBeInstanceOf(ContextError);
      expect(error.message).toMatch(
        /Context "jwks": the key set in .*leaked\.json is refused: .*private member "d"/,
      );
    });

    it.each([
      ["not JSON", "<html>", /is not JSON/],
      ["not a key set", "{}", /it is not a key set/],
      ["empty", '{"keys":[]}', /it holds no keys/],
      [
        "without a key of kty RSA, EC or OKP",
        '{"keys":[{"kty":"AKP","kid":"pq-1"}]}',
        /it holds no key of kty RSA, EC or OKP, and the function verifies RS\*, ES\* and EdDSA tokens/,
      ],
    ])("refuses a file that is %s", (name, content, message) => {
      const error = synthesisError({ ...brought, jwks: file(`${name}.json`, content) });
      expect(error).toBeInstanceOf(ContextError);
      expect(error.message).toMatch(message);
    });

    it("refuses a file that does not exist, and jwks without issuer", () => {
      expect(synthesisError({ ...brought, jwks: join(directory, "missing.json") }).message).toMatch(
        /Context "jwks" must name a readable key-set file, got ".*missing\.json" \(ENOENT\)/,
      );
      expect(synthesisError({ jwks: ISSUER_KEY_SET_FILE }).message).toMatch(
        /"jwks" only applies with "issuer"/,
      );
    });

    it("fails the synth when the set does not fit the environment, saying how many bytes are left", () => {
      const many = {
        keys: Array.from({ length: 9 }, (_, index) => ({ ...published.keys[0], kid: `k${index}` })),
      };
      expect(() =>
        synthesizedTemplate({ ...brought, jwks: file("many.json", JSON.stringify(many)) }),
      ).toThrow(
        /Context "jwks": the key set in .*many\.json takes \d+ bytes in the function's environment and \d+ are left/,
      );
    });
  });
});
