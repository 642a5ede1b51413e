import { describe, expect, it } from "vitest";
import { CONTEXT_DEFAULTS, readPlantStoreConfig, readStackName } from "../../infra/config.ts";

const contextOf =
  (values: Record<string, unknown>) =>
  (key: string): unknown =>
    values[key];

describe("readPlantStoreConfig", () => {
  it("defaults to a Cognito issuer, 1024 MB, no reservation, canary rollouts, 50 rps / 100 burst, no CORS, no email, no domain", () => {
    expect(readPlantStoreConfig(contextOf({}))).toEqual({
      tokenIssuer: { kind: "cognito", domainPrefix: undefined },
      memorySizeMb: 1024,
      reservedConcurrency: undefined,
      deployment: "canary",
      customDomain: undefined,
      throttleRateLimit: 50,
      throttleBurstLimit: 100,
      corsAllowOrigins: undefined,
      alarmEmail: undefined,
    });
  });

  it("accepts numbers as strings (from -c) and as numbers (from cdk.json)", () => {
    const fromCli = readPlantStoreConfig(contextOf({ memorySize: "1024", throttleRateLimit: "7" }));
    const fromJson = readPlantStoreConfig(contextOf({ memorySize: 1024, throttleRateLimit: 7 }));
    expect(fromCli).toEqual(fromJson);
    expect(fromCli.memorySizeMb).toBe(1024);
  });

  it("reserves concurrency only when told a number", () => {
    expect(readPlantStoreConfig(contextOf({ reservedConcurrency: "20" })).reservedConcurrency).toBe(20);
    expect(
      readPlantStoreConfig(contextOf({ reservedConcurrency: "none" })).reservedConcurrency,
    ).toBeUndefined();
  });

  it("rolls out all at once when told so, and refuses other styles", () => {
    expect(readPlantStoreConfig(contextOf({ deployment: "all-at-once" })).deployment).toBe("all-at-once");
    expect(readPlantStoreConfig(contextOf({ deployment: "canary" })).deployment).toBe("canary");
    expect(() => readPlantStoreConfig(contextOf({ deployment: "linear" }))).toThrow(
      'Context "deployment" must be canary or all-at-once, got "linear"',
    );
  });

  it.each([
    ["memorySize", "64"],
    ["memorySize", "256MB"],
    ["reservedConcurrency", "0"],
    ["reservedConcurrency", "-1"],
    ["throttleRateLimit", "1.5"],
    ["throttleBurstLimit", ""],
  ])("rejects %s=%j", (key, value) => {
    expect(() => readPlantStoreConfig(contextOf({ [key]: value }))).toThrow(new RegExp(`"${key}"`));
  });

  it("splits CORS origins and keeps the alarm email", () => {
    const config = readPlantStoreConfig(
      contextOf({
        corsAllowOrigins: " https://a.example ,https://b.example,",
        alarmEmail: "ops@example.com",
      }),
    );
    expect(config.corsAllowOrigins).toEqual(["https://a.example", "https://b.example"]);
    expect(config.alarmEmail).toBe("ops@example.com");
    expect(() => readPlantStoreConfig(contextOf({ alarmEmail: "ops" }))).toThrow(/alarmEmail/);
  });

  it("takes a Cognito domain prefix that Cognito accepts", () => {
    expect(readPlantStoreConfig(contextOf({ cognitoDomainPrefix: "my-plants" })).tokenIssuer).toEqual({
      kind: "cognito",
      domainPrefix: "my-plants",
    });
    expect(() => readPlantStoreConfig(contextOf({ cognitoDomainPrefix: "My_Plants" }))).toThrow(
      /cognitoDomainPrefix/,
    );
  });

  describe("with a bring-your-own issuer", () => {
    it("reads the issuer, audience, client ids, JWKS URL and scope", () => {
      const config = readPlantStoreConfig(
        contextOf({
          issuer: "https://idp.example.com",
          audience: "api://plants",
          clientIds: "a,b",
          jwksUrl: "https://idp.example.com/keys",
          requiredScope: "plants:write",
        }),
      );
      expect(config.tokenIssuer).toEqual({
        kind: "external",
        issuer: "https://idp.example.com",
        audience: "api://plants",
        clientIds: "a,b",
        jwksUrl: "https://idp.example.com/keys",
        requiredScope: "plants:write",
      });
    });

    it("defaults the scope to plants/write", () => {
      const config = readPlantStoreConfig(contextOf({ issuer: "https://idp.example.com", clientIds: "a" }));
      expect(config.tokenIssuer).toMatchObject({ requiredScope: CONTEXT_DEFAULTS.requiredScope });
      expect(CONTEXT_DEFAULTS.requiredScope).toBe("plants/write");
    });

    it("needs an audience or client ids, so tokens for other APIs fail", () => {
      expect(() => readPlantStoreConfig(contextOf({ issuer: "https://idp.example.com" }))).toThrow(
        /"issuer" needs "audience" .* or "clientIds" .*: without either, tokens the issuer signs for other/,
      );
      expect(() =>
        readPlantStoreConfig(contextOf({ issuer: "https://idp.example.com", audience: " ", clientIds: "" })),
      ).toThrow(/"issuer" needs "audience"/);
    });

    it("needs https URLs", () => {
      expect(() =>
        readPlantStoreConfig(contextOf({ issuer: "http://idp.example.com", audience: "api://plants" })),
      ).toThrow(/"issuer" must be an https URL/);
      expect(() =>
        readPlantStoreConfig(
          contextOf({ issuer: "https://idp.example.com", audience: "x", jwksUrl: "not a url" }),
        ),
      ).toThrow(/"jwksUrl" must be an https URL/);
    });

    it("refuses a Cognito domain prefix, which would be silently ignored", () => {
      expect(() =>
        readPlantStoreConfig(
          contextOf({ issuer: "https://idp.example.com", audience: "x", cognitoDomainPrefix: "plants" }),
        ),
      ).toThrow(/cognitoDomainPrefix/);
    });
  });

  describe("with a custom domain", () => {
    const certificateArn =
      "arn:aws:acm:eu-west-1:123456789012:certificate/0a1b2c3d-4e5f-6789-abcd-ef0123456789";

    it("reads the domain, certificate and hosted zone", () => {
      expect(
        readPlantStoreConfig(
          contextOf({
            domainName: "plants.example.com",
            certificateArn,
            hostedZoneId: "Z0123456789ABCDEFGHIJ",
          }),
        ).customDomain,
      ).toEqual({ domainName: "plants.example.com", certificateArn, hostedZoneId: "Z0123456789ABCDEFGHIJ" });
      expect(
        readPlantStoreConfig(contextOf({ domainName: "plants.example.com", certificateArn })).customDomain,
      ).toEqual({ domainName: "plants.example.com", certificateArn, hostedZoneId: undefined });
    });

    it.each([
      [{ certificateArn }, 'Context "certificateArn" only applies with "domainName"'],
      [{ hostedZoneId: "Z0123" }, 'Context "hostedZoneId" only applies with "domainName"'],
      [{ domainName: "plants.example.com" }, 'Context "domainName" needs "certificateArn"'],
      [{ domainName: "https://plants.example.com", certificateArn }, 'Context "domainName" must be'],
      [{ domainName: "plants", certificateArn }, 'Context "domainName" must be'],
      [{ domainName: "Plants.Example.com", certificateArn }, 'Context "domainName" must be'],
      [{ domainName: "plants.example.com", certificateArn: "0a1b2c3d" }, 'Context "certificateArn" must be'],
      [
        { domainName: "plants.example.com", certificateArn, hostedZoneId: "example.com" },
        'Context "hostedZoneId" must be',
      ],
    ])("refuses %j", (context, message) => {
      expect(() => readPlantStoreConfig(contextOf(context))).toThrow(message);
    });
  });

  it.each(["audience", "clientIds", "jwksUrl", "requiredScope"])(
    "refuses %s without an issuer, which would be silently ignored",
    (key) => {
      expect(() => readPlantStoreConfig(contextOf({ [key]: "https://x.example.com" }))).toThrow(
        new RegExp(`"${key}" only applies with "issuer"`),
      );
    },
  );
});

describe("readStackName", () => {
  it("defaults to PlantStore and takes a valid name from context", () => {
    expect(readStackName(contextOf({}))).toBe("PlantStore");
    expect(readStackName(contextOf({ stackName: "PlantStore-dev" }))).toBe("PlantStore-dev");
  });

  it("rejects names CloudFormation would", () => {
    expect(() => readStackName(contextOf({ stackName: "plant_store" }))).toThrow(/stackName/);
    expect(() => readStackName(contextOf({ stackName: "1plants" }))).toThrow(/stackName/);
  });
});
