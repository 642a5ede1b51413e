import { describe, expect, it } from "vitest";
import { CONTEXT_DEFAULTS, readPlantStoreConfig, readStackName } from "../../infra/config.ts";

const contextOf =
  (values: Record<string, unknown>) =>
  (key: string): unknown =>
    values[key];

describe("readPlantStoreConfig", () => {
  it("defaults to a Cognito issuer, 256 MB, 50 reserved executions, 50 rps / 100 burst, no CORS, no email", () => {
    expect(readPlantStoreConfig(contextOf({}))).toEqual({
      tokenIssuer: { kind: "cognito", domainPrefix: undefined },
      memorySizeMb: 256,
      reservedConcurrency: 50,
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

  it("reserves no concurrency when told none", () => {
    expect(
      readPlantStoreConfig(contextOf({ reservedConcurrency: "none" })).reservedConcurrency,
    ).toBeUndefined();
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
        /"audience".*"clientIds"/,
      );
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
