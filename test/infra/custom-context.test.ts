import { Match } from "aws-cdk-lib/assertions";
import { describe, expect, it } from "vitest";
import { OUTPUT_KEYS } from "../../infra/stack-outputs.ts";
import { onlyResource, synthesizePlantStore } from "./synthesize.ts";

// Every context option set away from its default, with a bring-your-own OIDC issuer.
const { template, nagFindings } = synthesizePlantStore({
  stackName: "PlantStoreStaging",
  issuer: "https://login.example.com/tenant",
  audience: "api://plants",
  jwksUrl: "https://login.example.com/tenant/keys",
  requiredScope: "plants.write",
  memorySize: "512",
  reservedConcurrency: "5",
  throttleRateLimit: "10",
  throttleBurstLimit: "20",
  corsAllowOrigins: "https://app.example.com, https://admin.example.com",
  alarmEmail: "ops@example.com",
});

describe("with a bring-your-own issuer", () => {
  it("creates no Cognito resources", () => {
    for (const type of [
      "AWS::Cognito::UserPool",
      "AWS::Cognito::UserPoolClient",
      "AWS::Cognito::UserPoolDomain",
      "AWS::Cognito::UserPoolResourceServer",
    ]) {
      template.resourceCountIs(type, 0);
    }
  });

  it("tells the handler the issuer, audience, JWKS URL and scope from context", () => {
    const variables = (
      onlyResource(template, "AWS::Lambda::Function").Environment as { Variables: Record<string, unknown> }
    ).Variables;
    expect(variables).toEqual({
      TABLE_NAME: { Ref: expect.stringMatching(/^PlantsTable/) },
      JWT_ISSUER: "https://login.example.com/tenant",
      JWT_AUDIENCE: "api://plants",
      JWKS_URL: "https://login.example.com/tenant/keys",
      REQUIRED_SCOPE: "plants.write",
      STORE_DEADLINE_MS: "3000",
    });
  });

  it("outputs the issuer and no token endpoint, client or secret command", () => {
    const outputKeys = Object.keys(template.findOutputs("*"));
    expect(outputKeys).toContain(OUTPUT_KEYS.jwtIssuer);
    for (const cognitoOnly of [
      OUTPUT_KEYS.tokenEndpoint,
      OUTPUT_KEYS.clientId,
      OUTPUT_KEYS.userPoolId,
      OUTPUT_KEYS.clientSecretCommand,
    ]) {
      expect(outputKeys).not.toContain(cognitoOnly);
    }
    template.hasOutput(OUTPUT_KEYS.jwtIssuer, { Value: "https://login.example.com/tenant" });
  });
});

describe("with sizing and limits from context", () => {
  it("sizes and caps the function", () => {
    template.hasResourceProperties("AWS::Lambda::Function", {
      MemorySize: 512,
      ReservedConcurrentExecutions: 5,
    });
  });

  it("throttles the stage", () => {
    template.hasResourceProperties("AWS::ApiGatewayV2::Stage", {
      DefaultRouteSettings: { ThrottlingRateLimit: 10, ThrottlingBurstLimit: 20 },
    });
  });

  it("allows cross-origin POSTs from the configured origins only", () => {
    template.hasResourceProperties("AWS::ApiGatewayV2::Api", {
      CorsConfiguration: {
        AllowOrigins: ["https://app.example.com", "https://admin.example.com"],
        AllowMethods: ["POST"],
        AllowHeaders: ["authorization", "content-type"],
      },
    });
  });
});

describe("with an alarm email", () => {
  it("subscribes it to a topic that only accepts TLS publishers", () => {
    template.hasResourceProperties("AWS::SNS::Subscription", {
      Protocol: "email",
      Endpoint: "ops@example.com",
    });
    template.hasResourceProperties("AWS::SNS::TopicPolicy", {
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({ Effect: "Deny", Condition: { Bool: { "aws:SecureTransport": "false" } } }),
        ]),
      },
    });
  });

  it("notifies the topic from every alarm", () => {
    const alarms = Object.values(template.findResources("AWS::CloudWatch::Alarm"));
    expect(alarms).toHaveLength(4);
    for (const alarm of alarms) {
      expect(alarm.Properties.AlarmActions).toEqual([{ Ref: expect.stringMatching(/^AlarmsAlarmTopic/) }]);
    }
  });
});

describe("cdk-nag AwsSolutions", () => {
  it("reports no unacknowledged error or warning", () => {
    expect(nagFindings).toEqual([]);
  });
});
