import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { Match } from "aws-cdk-lib/assertions";
import { describe, expect, it } from "vitest";
import { FUNCTION_TIMEOUT, STORE_DEADLINE } from "../../infra/plant-store-stack.ts";
import { OUTPUT_KEYS } from "../../infra/stack-outputs.ts";
import { onlyResource, synthesizePlantStore } from "./synthesize.ts";

const { template, nagFindings, handlerAssetDirectory } = synthesizePlantStore();

const tableRef = { Ref: Match.stringLikeRegexp("^PlantsTable") };
const userPoolRef = { Ref: Match.stringLikeRegexp("^TokenIssuerUserPool[0-9A-F]+$") };
const clientRef = { Ref: Match.stringLikeRegexp("^TokenIssuerUserPoolMachineClient") };

function logicalIdOf(type: string): string {
  const ids = Object.keys(template.findResources(type));
  if (ids.length !== 1 || ids[0] === undefined) throw new Error(`Expected one ${type}, found ${ids.length}`);
  return ids[0];
}

describe("the handler function", () => {
  const handler = onlyResource(template, "AWS::Lambda::Function");

  it("runs the ESM bundle on Node 24, ARM64, with 256 MB and a capped concurrency", () => {
    expect(handler).toMatchObject({
      Runtime: "nodejs24.x",
      Architectures: ["arm64"],
      Handler: "index.handler",
      MemorySize: 256,
      ReservedConcurrentExecutions: 50,
    });
  });

  it("times out well after the store deadline", () => {
    expect(handler.Timeout).toBe(FUNCTION_TIMEOUT.toSeconds());
    expect(FUNCTION_TIMEOUT.toMilliseconds()).toBeGreaterThanOrEqual(2 * STORE_DEADLINE.toMilliseconds());
  });

  it("logs JSON to its own log group, kept one month", () => {
    expect(handler.LoggingConfig).toEqual({
      LogFormat: "JSON",
      LogGroup: { Ref: expect.stringMatching(/^HandlerLogGroup/) },
    });
    template.hasResourceProperties("AWS::Logs::LogGroup", { RetentionInDays: 30 });
  });

  it("is told the table, the Cognito issuer, client id, scope and store deadline", () => {
    template.hasResourceProperties("AWS::Lambda::Function", {
      Environment: {
        Variables: {
          TABLE_NAME: tableRef,
          JWT_ISSUER: {
            "Fn::Join": [
              "",
              [
                "https://cognito-idp.",
                { Ref: "AWS::Region" },
                ".",
                { Ref: "AWS::URLSuffix" },
                "/",
                userPoolRef,
              ],
            ],
          },
          JWT_CLIENT_IDS: clientRef,
          REQUIRED_SCOPE: "plants/write",
          STORE_DEADLINE_MS: String(STORE_DEADLINE.toMilliseconds()),
        },
      },
    });
    const variables = (handler.Environment as { Variables: Record<string, unknown> }).Variables;
    expect(Object.keys(variables).sort()).toEqual([
      "JWT_CLIENT_IDS",
      "JWT_ISSUER",
      "REQUIRED_SCOPE",
      "STORE_DEADLINE_MS",
      "TABLE_NAME",
    ]);
  });

  it("is bundled as minified ESM with an external source map without sources", () => {
    const bundle = readFileSync(join(handlerAssetDirectory, "index.mjs"), "utf8");
    expect(bundle).toMatch(/export\s*\{[^}]*\bhandler\s*\}/);
    expect(bundle).toContain("//# sourceMappingURL=index.mjs.map");
    expect(bundle.split("\n").length).toBeLessThan(20);
    const sourceMap = JSON.parse(readFileSync(join(handlerAssetDirectory, "index.mjs.map"), "utf8"));
    expect(sourceMap.sources.length).toBeGreaterThan(0);
    expect(sourceMap.sourcesContent).toBeUndefined();
    expect(existsSync(join(handlerAssetDirectory, "node_modules"))).toBe(false);
  });
});

describe("the handler's permissions", () => {
  const role = onlyResource(template, "AWS::IAM::Role");
  const policy = onlyResource(template, "AWS::IAM::Policy");
  const statements = (policy.PolicyDocument as { Statement: Record<string, unknown>[] }).Statement;

  it("are exactly PutItem and GetItem on the table, and writing to its log group", () => {
    expect(statements).toEqual([
      {
        Effect: "Allow",
        Action: ["logs:CreateLogStream", "logs:PutLogEvents"],
        Resource: { "Fn::GetAtt": [expect.stringMatching(/^HandlerLogGroup/), "Arn"] },
      },
      {
        Effect: "Allow",
        Action: ["dynamodb:GetItem", "dynamodb:PutItem"],
        Resource: { "Fn::GetAtt": [expect.stringMatching(/^PlantsTable/), "Arn"] },
      },
    ]);
  });

  it("hold no wildcard and no managed policy", () => {
    expect(JSON.stringify(statements)).not.toContain("*");
    expect(role.ManagedPolicyArns).toBeUndefined();
    expect(role.Policies).toBeUndefined();
    template.hasResourceProperties("AWS::IAM::Role", {
      AssumeRolePolicyDocument: {
        Statement: [
          { Action: "sts:AssumeRole", Effect: "Allow", Principal: { Service: "lambda.amazonaws.com" } },
        ],
      },
    });
  });
});

describe("the table", () => {
  it("is on demand, keyed by a numeric id, encrypted, recoverable and protected", () => {
    expect(onlyResource(template, "AWS::DynamoDB::Table")).toEqual({
      AttributeDefinitions: [{ AttributeName: "id", AttributeType: "N" }],
      KeySchema: [{ AttributeName: "id", KeyType: "HASH" }],
      BillingMode: "PAY_PER_REQUEST",
      SSESpecification: { SSEEnabled: true },
      PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
      DeletionProtectionEnabled: true,
    });
  });

  it("outlives the stack", () => {
    template.hasResource("AWS::DynamoDB::Table", { DeletionPolicy: "Retain", UpdateReplacePolicy: "Retain" });
  });
});

describe("the HTTP API", () => {
  it("has the single route POST /plants, proxied to the handler with payload format 2.0", () => {
    const route = onlyResource(template, "AWS::ApiGatewayV2::Route");
    expect(route.RouteKey).toBe("POST /plants");
    // Authorization happens in the handler (see the APIG4 acknowledgement).
    expect(route.AuthorizationType).toBe("NONE");
    template.hasResourceProperties("AWS::ApiGatewayV2::Integration", {
      IntegrationType: "AWS_PROXY",
      PayloadFormatVersion: "2.0",
      IntegrationUri: { "Fn::GetAtt": [logicalIdOf("AWS::Lambda::Function"), "Arn"] },
    });
  });

  it("has no CORS unless configured", () => {
    expect(onlyResource(template, "AWS::ApiGatewayV2::Api").CorsConfiguration).toBeUndefined();
  });

  it("throttles the default stage at 50 requests per second with a burst of 100", () => {
    template.hasResourceProperties("AWS::ApiGatewayV2::Stage", {
      StageName: "$default",
      AutoDeploy: true,
      DefaultRouteSettings: { ThrottlingRateLimit: 50, ThrottlingBurstLimit: 100 },
    });
  });

  it("writes one JSON access log line per request to a log group kept one month", () => {
    const stage = onlyResource(template, "AWS::ApiGatewayV2::Stage");
    const settings = stage.AccessLogSettings as { DestinationArn: unknown; Format: string };
    expect(settings.DestinationArn).toEqual({
      "Fn::GetAtt": [expect.stringMatching(/^ApiAccessLogGroup/), "Arn"],
    });
    expect(JSON.parse(settings.Format)).toMatchObject({
      requestId: "$context.requestId",
      routeKey: "$context.routeKey",
      status: "$context.status",
      integrationError: "$context.integrationErrorMessage",
    });
    const logGroups = Object.entries(template.findResources("AWS::Logs::LogGroup"));
    expect(logGroups.map(([id]) => id.replace(/[0-9A-F]{8}$/, "")).sort()).toEqual([
      "ApiAccessLogGroup",
      "HandlerLogGroup",
    ]);
    for (const [, logGroup] of logGroups) expect(logGroup.Properties.RetentionInDays).toBe(30);
  });
});

describe("the Cognito token issuer", () => {
  it("is a user pool nobody can sign up to", () => {
    template.hasResourceProperties("AWS::Cognito::UserPool", {
      AdminCreateUserConfig: { AllowAdminCreateUserOnly: true },
    });
  });

  it("defines the resource server plants with the scope write", () => {
    template.hasResourceProperties("AWS::Cognito::UserPoolResourceServer", {
      Identifier: "plants",
      Scopes: [{ ScopeName: "write", ScopeDescription: Match.anyValue() }],
      UserPoolId: userPoolRef,
    });
  });

  it("has one confidential client limited to the client-credentials grant and plants/write", () => {
    expect(onlyResource(template, "AWS::Cognito::UserPoolClient")).toMatchObject({
      GenerateSecret: true,
      AllowedOAuthFlowsUserPoolClient: true,
      AllowedOAuthFlows: ["client_credentials"],
      AllowedOAuthScopes: [
        { "Fn::Join": ["", [{ Ref: expect.stringMatching(/ResourceServer/) }, "/write"]] },
      ],
      ExplicitAuthFlows: ["ALLOW_REFRESH_TOKEN_AUTH"],
      AccessTokenValidity: 60,
      TokenValidityUnits: { AccessToken: "minutes" },
    });
  });

  it("has a Cognito domain prefixed with the stack name and the stack's unique id", () => {
    template.hasResourceProperties("AWS::Cognito::UserPoolDomain", {
      Domain: {
        "Fn::Join": [
          "-",
          [
            "plantstore",
            {
              "Fn::Select": [
                0,
                {
                  "Fn::Split": ["-", { "Fn::Select": [2, { "Fn::Split": ["/", { Ref: "AWS::StackId" }] }] }],
                },
              ],
            },
          ],
        ],
      },
    });
  });
});

describe("the alarms", () => {
  const alarms = Object.values(
    template.findResources("AWS::CloudWatch::Alarm") as Record<
      string,
      { Properties: Record<string, unknown> }
    >,
  ).map((alarm) => alarm.Properties);
  const metricNames = alarms.map((alarm) =>
    alarm.MetricName === undefined
      ? JSON.stringify(alarm.Metrics).match(/"MetricName":"(\w+)"/)?.[1]
      : `${alarm.Namespace}/${alarm.MetricName}`,
  );

  it("watch API 5xx, function errors and throttles, and table throttling", () => {
    expect(metricNames.sort()).toEqual([
      "AWS/ApiGateway/5xx",
      "AWS/Lambda/Errors",
      "AWS/Lambda/Throttles",
      "ThrottledRequests",
    ]);
  });

  it("fire on a sum over five minutes, treat silence as fine, and notify nobody without an email", () => {
    for (const alarm of alarms) {
      expect(alarm).toMatchObject({
        ComparisonOperator: "GreaterThanOrEqualToThreshold",
        EvaluationPeriods: 1,
        TreatMissingData: "notBreaching",
      });
      expect(alarm.AlarmActions).toBeUndefined();
    }
    template.resourceCountIs("AWS::SNS::Topic", 0);
  });

  it("count throttled PutItem and GetItem even when only one of them has data", () => {
    template.hasResourceProperties("AWS::CloudWatch::Alarm", {
      Metrics: Match.arrayWith([
        Match.objectLike({ Expression: "FILL(putItem, 0) + FILL(getItem, 0)" }),
        Match.objectLike({
          Id: "putItem",
          MetricStat: Match.objectLike({
            Metric: Match.objectLike({
              Dimensions: Match.arrayWith([{ Name: "Operation", Value: "PutItem" }]),
            }),
            Period: 300,
            Stat: "Sum",
          }),
        }),
      ]),
    });
  });
});

describe("the outputs", () => {
  it("give the API URL, token endpoint, client, pool, table and log groups", () => {
    expect(Object.keys(template.findOutputs("*")).sort()).toEqual(Object.values(OUTPUT_KEYS).sort());
    template.hasOutput(OUTPUT_KEYS.apiUrl, {
      Value: {
        "Fn::Join": ["", [{ "Fn::GetAtt": [Match.stringLikeRegexp("^Api"), "ApiEndpoint"] }, "/plants"]],
      },
    });
    template.hasOutput(OUTPUT_KEYS.tokenEndpoint, {
      Value: {
        "Fn::Join": [
          "",
          [
            "https://",
            { Ref: Match.stringLikeRegexp("^TokenIssuerUserPoolDomain") },
            ".auth.",
            { Ref: "AWS::Region" },
            ".amazoncognito.com/oauth2/token",
          ],
        ],
      },
    });
    template.hasOutput(OUTPUT_KEYS.clientId, { Value: clientRef });
    template.hasOutput(OUTPUT_KEYS.userPoolId, { Value: userPoolRef });
    template.hasOutput(OUTPUT_KEYS.tableName, { Value: tableRef });
  });

  it("give the command that prints the client secret, never the secret", () => {
    template.hasOutput(OUTPUT_KEYS.clientSecretCommand, {
      Value: {
        "Fn::Join": [
          "",
          [
            "aws cognito-idp describe-user-pool-client --region ",
            { Ref: "AWS::Region" },
            " --user-pool-id ",
            userPoolRef,
            " --client-id ",
            clientRef,
            " --query UserPoolClient.ClientSecret --output text",
          ],
        ],
      },
    });
    expect(JSON.stringify(template.findOutputs("*"))).not.toContain('"ClientSecret"]');
  });
});

describe("cdk-nag AwsSolutions", () => {
  it("reports no unacknowledged error or warning", () => {
    expect(nagFindings).toEqual([]);
  });
});
