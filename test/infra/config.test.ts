import { describe, expect, it } from "vitest";
import {
  CONTEXT_KEYS,
  ContextError,
  readMultiRegionConfig,
  readPlantStoreConfig,
  readStackName,
  refuseUnknownContextKeys,
} from "../../infra/config.ts";
import { DEFAULT_REQUIRED_SCOPE } from "../../lambda/defaults.ts";

const contextOf =
  (values: Record<string, unknown>) =>
  (key: string): unknown =>
    values[key];

describe("readPlantStoreConfig", () => {
  it("defaults to a Cognito issuer, 1024 MB, no reservation, canary rollouts, 50 rps / 100 burst, no CORS, no email, no domain, no termination protection, no tags of the operator's, no edge protection", () => {
    expect(readPlantStoreConfig(contextOf({}))).toEqual({
      tokenIssuer: { kind: "cognito", domainPrefix: undefined, retained: undefined },
      memorySizeMb: 1024,
      reservedConcurrency: undefined,
      deployment: "canary",
      customDomain: undefined,
      throttleRateLimit: 50,
      throttleBurstLimit: 100,
      corsAllowOrigins: undefined,
      alarmEmail: undefined,
      existingTableName: undefined,
      tracing: true,
      terminationProtection: false,
      tags: {},
      edgeProtection: "none",
    });
  });

  it("takes null in cdk.json for any key as that key left out: the defaults", () => {
    const defaults = readPlantStoreConfig(contextOf({}));
    for (const key of CONTEXT_KEYS) {
      const withNull = contextOf({ [key]: null });
      expect(readPlantStoreConfig(withNull), key).toEqual(defaults);
      expect(readStackName(withNull), key).toBe(readStackName(contextOf({})));
      expect(readMultiRegionConfig(withNull), key).toBeUndefined();
    }
  });

  it("reads tracing as true or false, from -c or cdk.json, and refuses anything else", () => {
    expect(readPlantStoreConfig(contextOf({ tracing: "false" })).tracing).toBe(false);
    expect(readPlantStoreConfig(contextOf({ tracing: false })).tracing).toBe(false);
    expect(readPlantStoreConfig(contextOf({ tracing: "true" })).tracing).toBe(true);
    for (const value of ["off", "0", "False", ""]) {
      expect(() => readPlantStoreConfig(contextOf({ tracing: value }))).toThrow(
        /"tracing" must be true or false/,
      );
    }
  });

  it("accepts numbers as strings (from -c) and as numbers (from cdk.json)", () => {
    const fromCli = readPlantStoreConfig(contextOf({ memorySize: "1024", throttleRateLimit: "7" }));
    const fromJson = readPlantStoreConfig(contextOf({ memorySize: 1024, throttleRateLimit: 7 }));
    expect(fromCli).toEqual(fromJson);
    expect(fromCli.memorySizeMb).toBe(1024);
  });

  it("reserves concurrency only when told a number", () => {
    const reserved = contextOf({ reservedConcurrency: "200" });
    expect(readPlantStoreConfig(reserved).reservedConcurrency).toBe(200);
    expect(
      readPlantStoreConfig(contextOf({ reservedConcurrency: "none" })).reservedConcurrency,
    ).toBeUndefined();
  });

  it("refuses a stage burst above the reserved concurrency, which Lambda would throttle with 500s", () => {
    const read = (context: Record<string, string>) => () => readPlantStoreConfig(contextOf(context));
    expect(read({ reservedConcurrency: "50" })).toThrow(
      'Context "throttleBurstLimit" (100) is above "reservedConcurrency" (50)',
    );
    expect(read({ reservedConcurrency: "50" })).toThrow("set -c throttleBurstLimit=50 or lower");
    expect(read({ reservedConcurrency: "50", throttleBurstLimit: "50" })).not.toThrow();
    expect(read({ reservedConcurrency: "none", throttleBurstLimit: "500" })).not.toThrow();
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

  it.each(["*", "http://localhost:3000", "https://app.example.com:8443", "https://xn--bcher-kva.example"])(
    "takes the CORS origin %j",
    (origin) => {
      expect(readPlantStoreConfig(contextOf({ corsAllowOrigins: origin })).corsAllowOrigins).toEqual([
        origin,
      ]);
    },
  );

  it.each([
    ["app.example.com", ' "https://app.example.com"?'],
    ["https://app.example.com/", ' "https://app.example.com"?'],
    ["https://app.example.com/admin", ' "https://app.example.com"?'],
    ["https://App.Example.com", ' "https://app.example.com"?'],
    ["https://app.example.com:443", ' "https://app.example.com"?'],
    ["ftp://files.example.com", ""],
    ["localhost:3000", ""],
  ])("refuses the CORS entry %j, which no browser's Origin would match, naming it", (entry, suggestion) => {
    const read = () =>
      readPlantStoreConfig(contextOf({ corsAllowOrigins: `https://ok.example.com, ${entry}` }));
    expect(read).toThrow(ContextError);
    expect(read).toThrow(
      `Context "corsAllowOrigins" entry "${entry}" is not an origin: scheme://host[:port]`,
    );
    if (suggestion !== "") expect(read).toThrow(`; did you mean${suggestion}`);
    else expect(read).not.toThrow("did you mean");
  });

  it("serves an existing table when given its name, and refuses what is not a table name", () => {
    const tableName = "PlantStore-PlantsTable1A2B3C4D-0A1B2C3D4E5F";
    expect(readPlantStoreConfig(contextOf({ tableName })).existingTableName).toBe(tableName);
    expect(() =>
      readPlantStoreConfig(contextOf({ tableName: "arn:aws:dynamodb:eu-west-1:123456789012:table/plants" })),
    ).toThrow('Context "tableName" must be a DynamoDB table name');
    expect(() => readPlantStoreConfig(contextOf({ tableName: "ab" }))).toThrow(/"tableName"/);
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

    it("defaults the scope to the handler's own default, plants/write", () => {
      const config = readPlantStoreConfig(contextOf({ issuer: "https://idp.example.com", clientIds: "a" }));
      expect(config.tokenIssuer).toMatchObject({ requiredScope: DEFAULT_REQUIRED_SCOPE });
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

describe("refuseUnknownContextKeys", () => {
  const KNOWN_LIST = [...CONTEXT_KEYS].sort().join(", ");

  it("refuses a typo, suggesting the key it most likely meant and listing the known ones", () => {
    expect(() => refuseUnknownContextKeys(["memorysize"])).toThrow(
      new ContextError(`unknown context key 'memorysize'; did you mean 'memorySize'? known: ${KNOWN_LIST}`),
    );
    expect(() => refuseUnknownContextKeys(["corsAllowOrigin"])).toThrow(
      "unknown context key 'corsAllowOrigin'; did you mean 'corsAllowOrigins'?",
    );
    expect(() => refuseUnknownContextKeys(["tablename"])).toThrow("did you mean 'tableName'?");
  });

  it("refuses a key like none of ours without guessing", () => {
    expect(() => refuseUnknownContextKeys(["colour"])).toThrow(
      new ContextError(`unknown context key 'colour' known: ${KNOWN_LIST}`),
    );
  });

  it("lets every key of ours pass, and the keys CDK itself puts into the context", () => {
    expect(() =>
      refuseUnknownContextKeys([
        ...CONTEXT_KEYS,
        "@aws-cdk/core:validateAgainstDefaultRules",
        "aws:cdk:enable-path-metadata",
        "aws:cdk:bundling-stacks",
        "acknowledged-issue-numbers",
        "availability-zones:account=123456789012:region=eu-west-1",
      ]),
    ).not.toThrow();
  });

  it("knows exactly the keys the configuration reads, so none is refused that is used or allowed that is not", () => {
    const asked = new Set<string>();
    const recording = (key: string): unknown => {
      asked.add(key);
      return undefined;
    };
    readStackName(recording);
    readPlantStoreConfig(recording);
    // The external issuer's keys are read only with an issuer, the domain's only with a domain name.
    const withIssuer = (key: string): unknown => {
      asked.add(key);
      return ({ issuer: "https://idp.example.com", audience: "a" } as Record<string, unknown>)[key];
    };
    readPlantStoreConfig(withIssuer);
    // The multi-Region keys: witnessRegion and certificateArns are read whatever regions says.
    readMultiRegionConfig(recording);
    expect([...asked].sort()).toEqual([...CONTEXT_KEYS].sort());
  });
});
