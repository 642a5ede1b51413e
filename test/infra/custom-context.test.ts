import { Match } from "aws-cdk-lib/assertions";
import { describe, expect, it } from "vitest";
import { ContextError } from "../../infra/config.ts";
import { CORS_ALLOW_HEADERS, CORS_EXPOSE_HEADERS, CORS_MAX_AGE_SECONDS } from "../../infra/cors.ts";
import { OUTPUT_KEYS } from "../../infra/stack-outputs.ts";
import { readConfig } from "../../lambda/config.ts";
import { ROUTES } from "../../lambda/http/routes.ts";
import {
  deployedHandlerEnvironment,
  handlerResource,
  onlyLogicalId,
  onlyResource,
  policyOfRole,
  synthesisError,
  synthesizePlantStore,
} from "../support/synthesize.ts";

const CERTIFICATE_ARN = "arn:aws:acm:eu-west-1:123456789012:certificate/0a1b2c3d-4e5f-6789-abcd-ef0123456789";

const RETAINED_TABLE = "PlantStore-PlantsTable1A2B3C4D-0A1B2C3D4E5F";

// Every context option set away from its default, with a bring-your-own OIDC issuer, a custom domain
// whose DNS record is left to the user, and the table a destroyed stack retained.
const { template, nagFindings } = synthesizePlantStore({
  tableName: RETAINED_TABLE,
  stackName: "PlantStoreStaging",
  issuer: "https://login.example.com/tenant",
  audience: "api://plants",
  jwksUrl: "https://login.example.com/tenant/keys",
  requiredScope: "plants.write",
  memorySize: "512",
  reservedConcurrency: "25",
  throttleRateLimit: "10",
  throttleBurstLimit: "20",
  corsAllowOrigins: "https://app.example.com, https://admin.example.com",
  alarmEmail: "ops@example.com",
  deployment: "all-at-once",
  domainName: "plants.example.com",
  certificateArn: CERTIFICATE_ARN,
  tracing: "false",
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
    const variables = (handlerResource(template).Environment as { Variables: Record<string, unknown> })
      .Variables;
    expect(variables).toEqual({
      TABLE_NAME: RETAINED_TABLE,
      JWT_ISSUER: "https://login.example.com/tenant",
      JWT_AUDIENCE: "api://plants",
      JWKS_URL: "https://login.example.com/tenant/keys",
      // Read from JWKS_URL at deploy time (delivered-key-set.test.ts).
      JWKS_JSON: { "Fn::GetAtt": [expect.stringMatching(/^KeySetDelivery[0-9A-F]{8}$/), "KeySet"] },
      REQUIRED_SCOPE: "plants.write",
      STORE_DEADLINE_MS: "3000",
    });
  });

  it("is configured so that the deployed handler starts (it refuses to without client ids or audiences)", () => {
    expect(() => readConfig(deployedHandlerEnvironment(template))).not.toThrow();
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
      ReservedConcurrentExecutions: 25,
    });
  });

  it("throttles the stage", () => {
    template.hasResourceProperties("AWS::ApiGatewayV2::Stage", {
      DefaultRouteSettings: { ThrottlingRateLimit: 10, ThrottlingBurstLimit: 20 },
    });
  });

  it("allows cross-origin calls of the routes' methods from the configured origins only", () => {
    template.hasResourceProperties("AWS::ApiGatewayV2::Api", {
      CorsConfiguration: {
        AllowOrigins: ["https://app.example.com", "https://admin.example.com"],
        AllowMethods: [...new Set(ROUTES.map(({ method }) => method))],
        AllowHeaders: [...CORS_ALLOW_HEADERS],
        ExposeHeaders: [...CORS_EXPOSE_HEADERS],
        MaxAge: CORS_MAX_AGE_SECONDS,
      },
    });
  });
});

describe("with tracing=false", () => {
  it("leaves X-Ray tracing off: no active tracing, no X-Ray permission", () => {
    expect(handlerResource(template)).not.toHaveProperty("TracingConfig");
    expect(JSON.stringify(template.findResources("AWS::IAM::Policy"))).not.toContain("xray:");
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

  it("lets CloudWatch alarms of this account publish to the topic, beside the TLS-only Deny", () => {
    template.hasResourceProperties("AWS::SNS::TopicPolicy", {
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({
            Effect: "Allow",
            Principal: { Service: "cloudwatch.amazonaws.com" },
            Action: "sns:Publish",
            Condition: Match.objectLike({ StringEquals: { "aws:SourceAccount": { Ref: "AWS::AccountId" } } }),
          }),
        ]),
      },
    });
  });

  it("notifies the topic from every operator alarm, going off and back to OK, and from no rollback alarm", () => {
    const alarms = Object.entries(template.findResources("AWS::CloudWatch::Alarm"));
    expect(alarms).toHaveLength(10);
    for (const [id, alarm] of alarms) {
      if (id.startsWith("AlarmsNewVersion")) {
        expect(alarm.Properties.AlarmActions).toBeUndefined();
        expect(alarm.Properties.OKActions).toBeUndefined();
      } else {
        const topic = [{ Ref: expect.stringMatching(/^AlarmsAlarmTopic/) }];
        expect(alarm.Properties.AlarmActions, id).toEqual(topic);
        expect(alarm.Properties.OKActions, id).toEqual(topic);
      }
    }
  });
});

describe("with deployment=all-at-once", () => {
  it("still rolls out through CodeDeploy, moving all traffic at once", () => {
    template.hasResourceProperties("AWS::CodeDeploy::DeploymentGroup", {
      DeploymentConfigName: "CodeDeployDefault.LambdaAllAtOnce",
    });
    template.hasResource("AWS::Lambda::Alias", {
      UpdatePolicy: { CodeDeployLambdaAliasUpdate: Match.anyValue() },
    });
  });
});

describe("with a custom domain and no hosted zone", () => {
  const domainNameId = onlyLogicalId(template, "AWS::ApiGatewayV2::DomainName");

  it("serves the API on the domain with the given certificate, TLS 1.2, regional", () => {
    expect(onlyResource(template, "AWS::ApiGatewayV2::DomainName")).toEqual({
      DomainName: "plants.example.com",
      DomainNameConfigurations: [
        {
          CertificateArn: CERTIFICATE_ARN,
          EndpointType: "REGIONAL",
          SecurityPolicy: "TLS_1_2",
          IpAddressType: "dualstack",
        },
      ],
      Tags: { "plant-store:stack": "PlantStoreStaging" },
    });
  });

  it("closes the API's execute-api endpoint: the domain is the only way in", () => {
    expect(onlyResource(template, "AWS::ApiGatewayV2::Api").DisableExecuteApiEndpoint).toBe(true);
  });

  it("maps the domain's root to the $default stage, once the stage exists", () => {
    const stageId = onlyLogicalId(template, "AWS::ApiGatewayV2::Stage");
    template.hasResource("AWS::ApiGatewayV2::ApiMapping", {
      Properties: {
        ApiId: { Ref: onlyLogicalId(template, "AWS::ApiGatewayV2::Api") },
        DomainName: { Ref: domainNameId },
        Stage: "$default",
      },
      DependsOn: Match.arrayWith([stageId]),
    });
    expect(onlyResource(template, "AWS::ApiGatewayV2::ApiMapping")).not.toHaveProperty("ApiMappingKey");
  });

  it("stops the deploy before anything is created unless the stack is in the certificate's Region and account", () => {
    const rules = Object.entries(template.toJSON().Rules as Record<string, unknown>);
    expect(rules.filter(([id]) => id.startsWith("CustomDomain")).map(([, rule]) => rule)).toEqual([
      {
        Assertions: [
          {
            Assert: { "Fn::Equals": [{ Ref: "AWS::Region" }, "eu-west-1"] },
            AssertDescription: expect.stringContaining("deploy the stack to eu-west-1"),
          },
          {
            Assert: { "Fn::Equals": [{ Ref: "AWS::AccountId" }, "123456789012"] },
            AssertDescription: expect.stringContaining("account 123456789012"),
          },
        ],
      },
    ]);
  });

  it("names the custom URL and the target the DNS record must point to, and creates no record", () => {
    template.hasOutput(OUTPUT_KEYS.apiUrl, { Value: "https://plants.example.com/plants" });
    template.hasOutput(OUTPUT_KEYS.customDomainTarget, {
      Value: { "Fn::GetAtt": [domainNameId, "RegionalDomainName"] },
    });
    template.resourceCountIs("AWS::Route53::RecordSet", 0);
  });
});

describe("with the table a destroyed stack retained (tableName)", () => {
  const retainedTableArn = {
    "Fn::Join": [
      "",
      [
        "arn:",
        { Ref: "AWS::Partition" },
        ":dynamodb:",
        { Ref: "AWS::Region" },
        ":",
        { Ref: "AWS::AccountId" },
        `:table/${RETAINED_TABLE}`,
      ],
    ],
  };

  it("creates no table", () => {
    template.resourceCountIs("AWS::DynamoDB::Table", 0);
  });

  it("lets the handler PutItem and GetItem on that table only", () => {
    const handlerRoleId = Object.keys(template.findResources("AWS::IAM::Role")).find((id) =>
      id.startsWith("HandlerRole"),
    );
    const policy = policyOfRole(template, handlerRoleId ?? "").PolicyDocument as {
      Statement: { Action: unknown; Resource: unknown }[];
    };
    const dynamoDbStatements = policy.Statement.filter((statement) =>
      JSON.stringify(statement.Action).includes("dynamodb:"),
    );
    expect(dynamoDbStatements).toEqual([
      { Effect: "Allow", Action: ["dynamodb:GetItem", "dynamodb:PutItem"], Resource: retainedTableArn },
    ]);
  });

  it("watches that table's throttles in the alarm and the dashboard, and names it in the outputs", () => {
    const throttleAlarm = Object.values(template.findResources("AWS::CloudWatch::Alarm")).find((alarm) =>
      JSON.stringify(alarm).includes("ThrottledRequests"),
    );
    expect(JSON.stringify(throttleAlarm)).toContain(`"Name":"TableName","Value":"${RETAINED_TABLE}"`);
    const dashboard = JSON.stringify(onlyResource(template, "AWS::CloudWatch::Dashboard").DashboardBody);
    expect(dashboard).toContain(`\\"TableName\\",\\"${RETAINED_TABLE}\\"`);
    template.hasOutput(OUTPUT_KEYS.tableName, { Value: RETAINED_TABLE });
  });
});

describe("context refused at synth", () => {
  it.each([
    [{ issuer: "https://login.example.com/tenant" }, /"issuer" needs "audience" .* or "clientIds"/],
    [{ certificateArn: CERTIFICATE_ARN }, /"certificateArn" only applies with "domainName"/],
    [{ hostedZoneId: "Z0123456789ABC" }, /"hostedZoneId" only applies with "domainName"/],
    [{ domainName: "plants.example.com" }, /"domainName" needs "certificateArn"/],
    [{ deployment: "blue-green" }, /"deployment" must be canary or all-at-once/],
    [{ reservedConcurrency: "0" }, /"reservedConcurrency" must be an integer from 1/],
    [
      { memorysize: "512" },
      /^unknown context key 'memorysize'; did you mean 'memorySize'\? known: alarmEmail, /,
    ],
    [{ corsAllowOrigins: "app.example.com" }, /"corsAllowOrigins" entry "app.example.com" is not an origin/],
    [{ tableName: "arn:aws:dynamodb:eu-west-1:123456789012:table/t" }, /"tableName" must be a DynamoDB/],
    [{ userPoolClientId: "abc" }, /"userPoolClientId" only applies with "userPoolId"/],
    [{ userPoolId: "eu-west-1_AbC123" }, /"userPoolId" needs "userPoolClientId"/],
    [
      { userPoolId: "eu-west-1_AbC123", userPoolClientId: "1example23456789" },
      /"userPoolId" needs "cognitoDomainPrefix"/,
    ],
    [{ userPoolId: "plants", userPoolClientId: "1example23456789" }, /"userPoolId" must be a Cognito/],
    [{ terminationProtection: "yes" }, /"terminationProtection" must be true or false/],
    [{ tags: "team" }, /"tags" entry "team" must be key=value/],
    [{ tags: "aws:team=plants" }, /not starting with aws:/],
    [{ edgeProtection: "shield" }, /"edgeProtection" must be none or waf/],
    [{ edgeProtection: "waf" }, /"edgeProtection=waf" needs "domainName" and "certificateArn"/],
    // Each below synthesized, then failed CloudFormation Validate or the deploy, naming no setting.
    [{ tags: "team=" }, /"tags" value of "team" must be 1 to 256/],
    [{ tags: "plant-store:stack=other" }, /"tags" key "plant-store:stack" is the stack's own tag/],
    [{ tags: "team=a,team=b" }, /"tags" key "team" is given twice/],
    [{ issuer: "https://idp.example.com", audience: "," }, /"issuer" needs "audience"/],
    [
      {
        edgeProtection: "waf",
        domainName: "origin.example.com",
        certificateArn: "arn:aws:acm:eu-wst-1:123456789012:certificate/0a1b2c3d",
      },
      /"certificateArn" must be an ACM certificate ARN in an AWS Region/,
    ],
    [
      {
        stackName: `P${"p".repeat(111)}`,
        edgeProtection: "waf",
        domainName: "origin.example.com",
        certificateArn: "arn:aws:acm:eu-west-1:123456789012:certificate/0a1b2c3d",
      },
      /"stackName" is too long for "edgeProtection=waf"/,
    ],
  ])("%j", (context, message) => {
    const error = synthesisError(context);
    // A ContextError is printed by `cdk synth` as its message alone (infra/app.ts).
    expect(error).toBeInstanceOf(ContextError);
    expect(error.message).toMatch(message);
  });
});

describe("cdk-nag AwsSolutions", () => {
  it("reports no unacknowledged error or warning", () => {
    expect(nagFindings).toEqual([]);
  });
});
