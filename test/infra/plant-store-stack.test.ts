import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { Match } from "aws-cdk-lib/assertions";
import { describe, expect, it } from "vitest";
import {
  functionTracesFilter,
  INIT_DURATION_QUERY,
  INIT_DURATION_QUERY_NAME,
} from "../../infra/dashboard.ts";
import { FUNCTION_TIMEOUT, STORE_DEADLINE } from "../../infra/plant-store-stack.ts";
import { OUTPUT_KEYS } from "../../infra/stack-outputs.ts";
import { readConfig } from "../../lambda/config.ts";
import { ROUTES, routeKey } from "../../lambda/http/routes.ts";
import { METRIC_NAMES, METRICS_DIMENSION, METRICS_NAMESPACE } from "../../lambda/metrics.ts";
import {
  cognitoIdpUrlOf,
  deployedHandlerEnvironment,
  handlerLogicalId,
  handlerResource,
  onlyLogicalId,
  onlyResource,
  policyOfRole,
  synthesizePlantStore,
} from "../support/synthesize.ts";

const { template, nagFindings, handlerAssetDirectory } = synthesizePlantStore();

const tableRef = { Ref: Match.stringLikeRegexp("^PlantsTable") };
const userPoolRef = { Ref: Match.stringLikeRegexp("^TokenIssuerUserPool[0-9A-F]+$") };
const clientRef = { Ref: Match.stringLikeRegexp("^TokenIssuerUserPoolMachineClient") };

const handlerRef = { Ref: handlerLogicalId(template) };
const aliasId = onlyLogicalId(template, "AWS::Lambda::Alias");
const versionId = onlyLogicalId(template, "AWS::Lambda::Version");

/** The logical id of the one resource of `type` whose logical id starts with `prefix`. */
function resourceLogicalId(type: string, prefix: string): string {
  const matches = Object.keys(template.findResources(type)).filter((id) => id.startsWith(prefix));
  if (matches.length !== 1 || matches[0] === undefined) {
    throw new Error(`Expected one ${type} named ${prefix}*, found ${matches.length}`);
  }
  return matches[0];
}

describe("the handler function", () => {
  const handler = handlerResource(template);

  it("runs the ESM bundle on Node 24, ARM64, with 1024 MB", () => {
    expect(handler).toMatchObject({
      Runtime: "nodejs24.x",
      Architectures: ["arm64"],
      Handler: "index.handler",
      MemorySize: 1024,
    });
  });

  it("reserves no concurrency, which accounts with a quota below 150 would refuse", () => {
    expect(handler).not.toHaveProperty("ReservedConcurrentExecutions");
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
          JWT_ISSUER: cognitoIdpUrlOf("/", userPoolRef),
          JWT_CLIENT_IDS: clientRef,
          REQUIRED_SCOPE: "plants/write",
          STORE_DEADLINE_MS: String(STORE_DEADLINE.toMilliseconds()),
        },
      },
    });
    const variables = (handler.Environment as { Variables: Record<string, unknown> }).Variables;
    expect(Object.keys(variables).sort()).toEqual([
      "JWKS_JSON",
      "JWT_CLIENT_IDS",
      "JWT_ISSUER",
      "REQUIRED_SCOPE",
      "STORE_DEADLINE_MS",
      "TABLE_NAME",
    ]);
  });

  it("is configured so that the deployed handler starts (it refuses to without client ids or audiences)", () => {
    expect(() => readConfig(deployedHandlerEnvironment(template))).not.toThrow();
  });

  it("records X-Ray traces of its sampled invocations (active tracing)", () => {
    expect(handler.TracingConfig).toEqual({ Mode: "Active" });
  });

  it("is bundled as minified ESM with an external source map without sources", () => {
    const bundle = readFileSync(join(handlerAssetDirectory, "index.mjs"), "utf8");
    expect(bundle).toMatch(/export\s*\{[^}]*\bas handler\b[^}]*\}/);
    expect(bundle).toContain("//# sourceMappingURL=index.mjs.map");
    // Minified: lines of thousands of characters (a line break inside a string stays one, as esbuild writes it).
    const lines = bundle.split("\n");
    expect(bundle.length / lines.length).toBeGreaterThan(1000);
    const sourceMap = JSON.parse(readFileSync(join(handlerAssetDirectory, "index.mjs.map"), "utf8"));
    expect(sourceMap.sources.length).toBeGreaterThan(0);
    expect(sourceMap.sourcesContent).toBeUndefined();
    expect(existsSync(join(handlerAssetDirectory, "node_modules"))).toBe(false);
  });
});

describe("the handler's permissions", () => {
  const role = template.findResources("AWS::IAM::Role")[resourceLogicalId("AWS::IAM::Role", "HandlerRole")]
    ?.Properties as Record<string, unknown>;
  const policy = policyOfRole(template, resourceLogicalId("AWS::IAM::Role", "HandlerRole"));
  const statements = (policy.PolicyDocument as { Statement: Record<string, unknown>[] }).Statement;

  it("are exactly PutItem and GetItem on the table, writing to its log group, and sending traces", () => {
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
      // X-Ray grants these on no narrower resource (acknowledged for cdk-nag).
      { Effect: "Allow", Action: ["xray:PutTelemetryRecords", "xray:PutTraceSegments"], Resource: "*" },
    ]);
  });

  it("hold no other wildcard and no managed policy", () => {
    const untraced = statements.filter((statement) => !JSON.stringify(statement.Action).includes("xray:"));
    expect(JSON.stringify(untraced)).not.toContain("*");
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
      Tags: [{ Key: "plant-store:stack", Value: "PlantStore" }],
    });
  });

  it("outlives the stack, a replacement and its own failed first create, which then rolls back clean", () => {
    // RetainExceptOnCreate would make a failed first create delete the protected table: ROLLBACK_FAILED.
    template.hasResource("AWS::DynamoDB::Table", { DeletionPolicy: "Retain", UpdateReplacePolicy: "Retain" });
    // A generated name: the next create cannot collide with the empty table a failed one left.
    expect(onlyResource(template, "AWS::DynamoDB::Table").TableName).toBeUndefined();
  });
});

describe("the HTTP API", () => {
  it("has a route per operation of lambda/http/routes.ts, proxied to the live alias with payload format 2.0", () => {
    const routes = Object.values(template.findResources("AWS::ApiGatewayV2::Route")).map(
      ({ Properties }) => Properties as { RouteKey: string; AuthorizationType: string },
    );
    expect(routes.map(({ RouteKey }) => RouteKey).sort()).toEqual(ROUTES.map(routeKey).sort());
    // Authorization happens in the handler (see the APIG4 acknowledgement).
    for (const route of routes) expect(route.AuthorizationType).toBe("NONE");
    expect(onlyResource(template, "AWS::ApiGatewayV2::Integration")).toMatchObject({
      IntegrationType: "AWS_PROXY",
      PayloadFormatVersion: "2.0",
      // Ref of an alias is its ARN.
      IntegrationUri: { Ref: aliasId },
    });
  });

  it("may invoke the live alias only, each route by its own path", () => {
    const permissions = Object.values(template.findResources("AWS::Lambda::Permission"));
    expect(permissions).toHaveLength(ROUTES.length);
    for (const { Properties } of permissions) {
      expect(Properties).toMatchObject({
        Action: "lambda:InvokeFunction",
        FunctionName: { Ref: aliasId },
        Principal: "apigateway.amazonaws.com",
      });
    }
    const sources = JSON.stringify(permissions.map(({ Properties }) => Properties.SourceArn));
    for (const { path } of ROUTES) expect(sources).toContain(`/*/*${path}"`);
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

  it("writes its access log to a group under /aws/vendedlogs/, which the account's log resource policy covers", () => {
    expect(
      template.findResources("AWS::Logs::LogGroup")[
        resourceLogicalId("AWS::Logs::LogGroup", "ApiAccessLogGroup")
      ]?.Properties.LogGroupName,
    ).toBe("/aws/vendedlogs/apigateway/PlantStore/access");
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
      "KeySetDeliveryReaderLogGroup",
      "PreTrafficCheckLogGroup",
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

  it("keeps the pool, its client, resource server and domain when the stack is deleted, not after a failed first create", () => {
    for (const type of [
      "AWS::Cognito::UserPool",
      "AWS::Cognito::UserPoolClient",
      "AWS::Cognito::UserPoolResourceServer",
      "AWS::Cognito::UserPoolDomain",
    ]) {
      template.hasResource(type, { DeletionPolicy: "RetainExceptOnCreate", UpdateReplacePolicy: "Retain" });
    }
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

  it("watch the function's faults, its unavailable store and issuer, crashes, throttles and unclassified 5xx", () => {
    expect(metricNames.sort()).toEqual([
      "5xx",
      "AWS/Lambda/Errors",
      "AWS/Lambda/Errors",
      "AWS/Lambda/Throttles",
      "PlantStore/Fault",
      "PlantStore/Fault",
      "PlantStore/IssuerUnavailable",
      "PlantStore/StageThrottled",
      "PlantStore/StoreUnavailable",
      "ThrottledRequests",
    ]);
  });

  it("page nobody for a 503 the function classified (the store, the issuer, a token naming an unknown key), nor for a body too large for Lambda", () => {
    template.hasResourceProperties("AWS::CloudWatch::Alarm", {
      Threshold: 5,
      Metrics: Match.arrayWith([
        Match.objectLike({
          Expression:
            "FILL(gateway5xx, 0) - FILL(invokestoolarge, 0) - FILL(storeunavailable, 0) - FILL(issuerunavailable, 0) - FILL(unknownsigningkeyheld, 0)",
        }),
        Match.objectLike({
          Id: "invokestoolarge",
          MetricStat: Match.objectLike({
            Metric: Match.objectLike({ Namespace: "PlantStore", MetricName: "InvokeTooLarge" }),
          }),
        }),
        Match.objectLike({
          Id: "unknownsigningkeyheld",
          MetricStat: Match.objectLike({
            Metric: Match.objectLike({ Namespace: "PlantStore", MetricName: "UnknownSigningKeyHeld" }),
          }),
        }),
      ]),
    });
    const unknownKeyAlone = alarms.filter((alarm) =>
      String(alarm.MetricName).startsWith("UnknownSigningKey"),
    );
    expect(unknownKeyAlone).toEqual([]);
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

  it("count the new version's own faults and errors, in alarms named after that version", () => {
    const versionNumber = { "Fn::GetAtt": [versionId, "Version"] };
    template.hasResourceProperties("AWS::CloudWatch::Alarm", {
      AlarmName: { "Fn::Join": ["", ["PlantStore-NewVersionFaults-v", versionNumber]] },
      Namespace: "PlantStore",
      MetricName: "Fault",
      Dimensions: [
        { Name: "FunctionName", Value: handlerRef },
        { Name: "FunctionVersion", Value: versionNumber },
      ],
      Period: 60,
    });
    template.hasResourceProperties("AWS::CloudWatch::Alarm", {
      AlarmName: { "Fn::Join": ["", ["PlantStore-NewVersionErrors-v", versionNumber]] },
      Namespace: "AWS/Lambda",
      MetricName: "Errors",
      Dimensions: [
        { Name: "ExecutedVersion", Value: { "Fn::GetAtt": [versionId, "Version"] } },
        { Name: "FunctionName", Value: handlerRef },
        { Name: "Resource", Value: { "Fn::Join": ["", [handlerRef, ":live"]] } },
      ],
      Period: 60,
    });
  });

  it("say in their descriptions the period they sum over", () => {
    for (const alarm of alarms) {
      const period = (alarm.Period ??
        (alarm.Metrics as { MetricStat?: { Period: number } }[]).find((query) => query.MetricStat)?.MetricStat
          ?.Period) as number;
      expect([60, 300]).toContain(period);
      expect(alarm.AlarmDescription).toMatch(period === 60 ? / in 1 minute\)$/ : / in 5 minutes\)$/);
    }
    const rollbackDescriptions = alarms
      .filter((alarm) => JSON.stringify(alarm.AlarmName ?? "").includes("NewVersion"))
      .map((alarm) => alarm.AlarmDescription);
    expect(rollbackDescriptions).toHaveLength(2);
    for (const description of rollbackDescriptions) expect(description).toMatch(/\(sum >= 1 in 1 minute\)$/);
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
  it("give the API URL, token endpoint, client, pool, table, log groups and dashboard", () => {
    const customDomainOnly: string[] = [OUTPUT_KEYS.customDomainTarget];
    expect(Object.keys(template.findOutputs("*")).sort()).toEqual(
      Object.values(OUTPUT_KEYS)
        .filter((key) => !customDomainOnly.includes(key))
        .sort(),
    );
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

describe("the rollout", () => {
  const alias = onlyResource(template, "AWS::Lambda::Alias");
  const hookId = resourceLogicalId("AWS::Lambda::Function", "PreTrafficCheckFunction");
  const deploymentGroup = onlyResource(template, "AWS::CodeDeploy::DeploymentGroup");

  it("points the alias live at the version this deploy publishes", () => {
    expect(alias).toEqual({
      FunctionName: handlerRef,
      FunctionVersion: { "Fn::GetAtt": [versionId, "Version"] },
      Name: "live",
    });
    // The description holds the delivered key set's digest (delivered-key-set.test.ts).
    expect(onlyResource(template, "AWS::Lambda::Version")).toEqual({
      FunctionName: handlerRef,
      Description: { "Fn::Join": [" ", ["JWKS_JSON:", { "Fn::GetAtt": [expect.any(String), "Digest"] }]] },
    });
  });

  it("keeps every published version, so that an operator can point the alias back by hand", () => {
    template.hasResource("AWS::Lambda::Version", {
      DeletionPolicy: "RetainExceptOnCreate",
      UpdateReplacePolicy: "Retain",
    });
  });

  it("lets CodeDeploy move this function's alias only, with a role of its own and no managed policy", () => {
    const roleId = resourceLogicalId("AWS::IAM::Role", "RolloutServiceRole");
    expect(deploymentGroup.ServiceRoleArn).toEqual({ "Fn::GetAtt": [roleId, "Arn"] });
    const role = template.findResources("AWS::IAM::Role")[roleId]?.Properties as Record<string, unknown>;
    expect(role.ManagedPolicyArns).toBeUndefined();
    expect(JSON.stringify(template.toJSON())).not.toContain("AWSCodeDeployRoleForLambda");
    const functionArn = { "Fn::GetAtt": [handlerRef.Ref, "Arn"] };
    expect((policyOfRole(template, roleId).PolicyDocument as { Statement: unknown[] }).Statement).toEqual([
      {
        Effect: "Allow",
        Action: ["lambda:GetAlias", "lambda:GetProvisionedConcurrencyConfig", "lambda:UpdateAlias"],
        Resource: [functionArn, { "Fn::Join": ["", [functionArn, ":live"]] }],
      },
      { Effect: "Allow", Action: "lambda:InvokeFunction", Resource: { "Fn::GetAtt": [hookId, "Arn"] } },
      {
        Effect: "Allow",
        Action: "cloudwatch:DescribeAlarms",
        Resource: {
          "Fn::Join": [
            "",
            [
              "arn:",
              { Ref: "AWS::Partition" },
              ":cloudwatch:",
              { Ref: "AWS::Region" },
              ":",
              { Ref: "AWS::AccountId" },
              ":alarm:PlantStore-NewVersion*",
            ],
          ],
        },
      },
    ]);
  });

  it("may be assumed only by CodeDeploy for a deployment group of its application, in its account", () => {
    const roleId = resourceLogicalId("AWS::IAM::Role", "RolloutServiceRole");
    const role = template.findResources("AWS::IAM::Role")[roleId]?.Properties as {
      AssumeRolePolicyDocument: { Statement: unknown[] };
    };
    expect(role.AssumeRolePolicyDocument.Statement).toEqual([
      {
        Action: "sts:AssumeRole",
        Effect: "Allow",
        Principal: { Service: "codedeploy.amazonaws.com" },
        Condition: {
          StringEquals: { "aws:SourceAccount": { Ref: "AWS::AccountId" } },
          ArnLike: {
            "aws:SourceArn": deploymentGroupArnOf("*"),
          },
        },
      },
    ]);
  });

  it("names the rollback alarms in DescribeAlarms' scope", () => {
    const names = Object.values(template.findResources("AWS::CloudWatch::Alarm"))
      .map(({ Properties }) => JSON.stringify(Properties.AlarmName ?? ""))
      .filter((name) => name.includes("NewVersion"));
    expect(names).toHaveLength(2);
    for (const name of names) expect(name).toMatch(/^\{"Fn::Join":\["",\["PlantStore-NewVersion/);
  });

  it("moves the alias through CodeDeploy, not at once, after the pre-traffic hook passed", () => {
    // The references order the group (this version's alarms) and the hook before CodeDeploy moves the alias.
    template.hasResource("AWS::Lambda::Alias", {
      UpdatePolicy: {
        CodeDeployLambdaAliasUpdate: {
          ApplicationName: { Ref: onlyLogicalId(template, "AWS::CodeDeploy::Application") },
          DeploymentGroupName: { Ref: onlyLogicalId(template, "AWS::CodeDeploy::DeploymentGroup") },
          BeforeAllowTrafficHook: { Ref: hookId },
        },
      },
    });
    template.hasResourceProperties("AWS::CodeDeploy::Application", { ComputePlatform: "Lambda" });
  });

  it("names the CodeDeploy application and deployment group in the outputs", () => {
    template.hasOutput(OUTPUT_KEYS.deploymentApplication, {
      Value: { Ref: onlyLogicalId(template, "AWS::CodeDeploy::Application") },
    });
    template.hasOutput(OUTPUT_KEYS.deploymentGroup, {
      Value: { Ref: onlyLogicalId(template, "AWS::CodeDeploy::DeploymentGroup") },
    });
  });

  it("sends 10% of the traffic to the new version for 5 minutes by default", () => {
    expect(deploymentGroup.DeploymentConfigName).toBe("CodeDeployDefault.LambdaCanary10Percent5Minutes");
  });

  it("rolls back on the new version's own faults or errors, never on the API's 5xx, or when the deployment fails", () => {
    const alarmRef = (prefix: string) => ({
      Ref: expect.stringMatching(new RegExp(`^Alarms${prefix}[0-9A-F]{8}$`)),
    });
    expect(deploymentGroup.AlarmConfiguration).toEqual({
      Alarms: [{ Name: alarmRef("NewVersionFaults") }, { Name: alarmRef("NewVersionErrors") }],
      Enabled: true,
    });
    expect(deploymentGroup.AutoRollbackConfiguration).toEqual({
      Enabled: true,
      Events: ["DEPLOYMENT_FAILURE", "DEPLOYMENT_STOP_ON_REQUEST", "DEPLOYMENT_STOP_ON_ALARM"],
    });
  });
});

describe("the pre-traffic hook", () => {
  const hookId = resourceLogicalId("AWS::Lambda::Function", "PreTrafficCheckFunction");
  const hook = template.findResources("AWS::Lambda::Function")[hookId]?.Properties as Record<string, unknown>;
  const roleId = resourceLogicalId("AWS::IAM::Role", "PreTrafficCheckRole");
  const functionArn = { "Fn::GetAtt": [handlerRef.Ref, "Arn"] };
  const statementsOf = (policy: Record<string, unknown>) =>
    (policy.PolicyDocument as { Statement: unknown[] }).Statement;
  const policies = Object.entries(template.findResources("AWS::IAM::Policy")).filter(
    ([, { Properties }]) => JSON.stringify(Properties.Roles) === JSON.stringify([{ Ref: roleId }]),
  );
  const deploymentGroupArn = deploymentGroupArnOf({
    Ref: onlyLogicalId(template, "AWS::CodeDeploy::DeploymentGroup"),
  });

  it("probes the handler function, named in its environment, on Node 24 with its own log group", () => {
    expect(hook).toMatchObject({
      Runtime: "nodejs24.x",
      Environment: { Variables: { PROBED_FUNCTION_NAME: handlerRef } },
      LoggingConfig: {
        LogGroup: { Ref: resourceLogicalId("AWS::Logs::LogGroup", "PreTrafficCheckLogGroup") },
      },
      Role: { "Fn::GetAtt": [roleId, "Arn"] },
    });
  });

  it("may invoke only the handler's versions, and read and report only its own deployment group", () => {
    expect(policies.flatMap(([, { Properties }]) => statementsOf(Properties))).toEqual([
      {
        Effect: "Allow",
        Action: ["logs:CreateLogStream", "logs:PutLogEvents"],
        Resource: {
          "Fn::GetAtt": [resourceLogicalId("AWS::Logs::LogGroup", "PreTrafficCheckLogGroup"), "Arn"],
        },
      },
      {
        Effect: "Allow",
        Action: "lambda:InvokeFunction",
        Resource: { "Fn::Join": ["", [functionArn, ":*"]] },
      },
      {
        Effect: "Allow",
        Action: ["codedeploy:GetDeployment", "codedeploy:PutLifecycleEventHookExecutionStatus"],
        Resource: deploymentGroupArn,
      },
      {
        Effect: "Allow",
        Action: "codedeploy:GetApplicationRevision",
        Resource: codeDeployArnOf("application"),
      },
    ]);
    const role = template.findResources("AWS::IAM::Role")[roleId]?.Properties as Record<string, unknown>;
    expect(role.ManagedPolicyArns).toBeUndefined();
  });

  it("has its deployment permissions in place before CodeDeploy moves the alias", () => {
    const [deploymentAccessId] = policies
      .map(([id]) => id)
      .filter((id) => id.startsWith("PreTrafficCheckDeploymentAccess"));
    template.hasResource("AWS::Lambda::Alias", { DependsOn: Match.arrayWith([deploymentAccessId]) });
  });
});

describe("what the access log counts that AWS/ApiGateway cannot tell apart", () => {
  const filters = Object.values(
    template.findResources("AWS::Logs::MetricFilter") as Record<
      string,
      { Properties: Record<string, unknown> }
    >,
  ).map((filter) => filter.Properties);
  const counting = (metricName: string, pattern: string) => ({
    LogGroupName: { Ref: resourceLogicalId("AWS::Logs::LogGroup", "ApiAccessLogGroup") },
    FilterPattern: pattern,
    MetricTransformations: [
      {
        MetricNamespace: "PlantStore",
        MetricName: metricName,
        MetricValue: "1",
        Dimensions: [{ Key: "ApiId", Value: "$.apiId" }],
      },
    ],
  });

  it("counts, per API, the stage's own 429s (no integration ran) and the bodies Lambda refused as too large", () => {
    expect(filters).toEqual([
      counting("StageThrottled", '{ ($.status = "429") && ($.integrationStatus = "-") }'),
      // Lambda's RequestEntityTooLargeException: the invoke's own status, which the gateway answers 500.
      counting("InvokeTooLarge", '{ $.integrationStatus = "413" }'),
    ]);
    const format = JSON.parse(
      (onlyResource(template, "AWS::ApiGatewayV2::Stage").AccessLogSettings as { Format: string }).Format,
    );
    // The fields the filters read, as the access log writes them.
    expect(format).toMatchObject({
      apiId: "$context.apiId",
      status: "$context.status",
      integrationStatus: "$context.integrationStatus",
    });
  });

  it("raise an operator's alarm at 10 in 5 minutes", () => {
    template.hasResourceProperties("AWS::CloudWatch::Alarm", {
      Namespace: "PlantStore",
      MetricName: "StageThrottled",
      Dimensions: [{ Name: "ApiId", Value: { Ref: onlyLogicalId(template, "AWS::ApiGatewayV2::Api") } }],
      Statistic: "Sum",
      Period: 300,
      Threshold: 10,
    });
  });
});

/**
 * The dashboard body as CloudWatch will read it, with each CloudFormation reference written as
 * `ref:<logical id>` or `getatt:<logical id>.<attribute>`.
 */
function dashboardWidgets(): { type: string; properties: Record<string, unknown> }[] {
  const body = onlyResource(template, "AWS::CloudWatch::Dashboard").DashboardBody as {
    "Fn::Join": [string, unknown[]];
  };
  const text = body["Fn::Join"][1]
    .map((part) => {
      if (typeof part === "string") return part;
      const reference = part as { Ref?: string; "Fn::GetAtt"?: [string, string] };
      if (reference.Ref !== undefined) return `ref:${reference.Ref}`;
      if (reference["Fn::GetAtt"] !== undefined) return `getatt:${reference["Fn::GetAtt"].join(".")}`;
      throw new Error(`Unexpected token in the dashboard body: ${JSON.stringify(part)}`);
    })
    .join("");
  return JSON.parse(text).widgets;
}

describe("the dashboard", () => {
  const widgets = dashboardWidgets();
  /** [namespace, metric name, dimension name, dimension value, ...] of every graphed metric, options dropped. */
  const graphedMetrics = widgets.flatMap((widget) =>
    ((widget.properties.metrics ?? []) as unknown[][]).map((line) =>
      line.filter((item) => typeof item === "string"),
    ),
  );
  const stats = widgets.flatMap((widget) =>
    ((widget.properties.metrics ?? []) as unknown[][]).map((line) => (line.at(-1) as { stat?: string }).stat),
  );

  it("graphs every business metric of the function, by the function's name", () => {
    for (const metricName of METRIC_NAMES) {
      expect(graphedMetrics).toContainEqual([
        METRICS_NAMESPACE,
        metricName,
        METRICS_DIMENSION,
        `ref:${handlerRef.Ref}`,
      ]);
    }
  });

  it("graphs API requests, 4xx, 5xx and latency, function duration, errors, throttles and concurrency", () => {
    const apiId = `ref:${onlyLogicalId(template, "AWS::ApiGatewayV2::Api")}`;
    const functionName = `ref:${handlerRef.Ref}`;
    for (const metricName of ["Count", "4xx", "5xx", "Latency", "IntegrationLatency"]) {
      expect(graphedMetrics).toContainEqual(["AWS/ApiGateway", metricName, "ApiId", apiId]);
    }
    for (const metricName of ["Duration", "Invocations", "Errors", "Throttles", "ConcurrentExecutions"]) {
      expect(graphedMetrics).toContainEqual(["AWS/Lambda", metricName, "FunctionName", functionName]);
    }
    expect(stats).toEqual(expect.arrayContaining(["p50", "p99"]));
  });

  it("graphs the table's consumed writes and throttled PutItem and GetItem", () => {
    const tableName = `ref:${onlyLogicalId(template, "AWS::DynamoDB::Table")}`;
    expect(graphedMetrics).toContainEqual([
      "AWS/DynamoDB",
      "ConsumedWriteCapacityUnits",
      "TableName",
      tableName,
    ]);
    for (const operation of ["PutItem", "GetItem"]) {
      expect(graphedMetrics).toContainEqual([
        "AWS/DynamoDB",
        "ThrottledRequests",
        "Operation",
        operation,
        "TableName",
        tableName,
      ]);
    }
  });

  it("saves the cold-start init-duration query over the function's log group, and runs no query on load", () => {
    expect(widgets.filter((widget) => widget.type === "log")).toEqual([]);
    const handlerLogGroup = resourceLogicalId("AWS::Logs::LogGroup", "HandlerLogGroup");
    expect(onlyResource(template, "AWS::Logs::QueryDefinition")).toEqual({
      Name: `PlantStore/${INIT_DURATION_QUERY_NAME}`,
      QueryString: INIT_DURATION_QUERY,
      LogGroupNames: [{ Ref: handlerLogGroup }],
    });
    expect(INIT_DURATION_QUERY).toMatch(/filter type = "platform\.report"/);
    expect(INIT_DURATION_QUERY).toMatch(/pct\(record\.metrics\.initDurationMs, 99\)/);
  });

  it("links to the function's traces in the X-Ray console", () => {
    const text = widgets.find((widget) => widget.type === "text")?.properties.markdown as string;
    const functionName = `ref:${handlerRef.Ref}`;
    expect(text).toContain(
      `#xray:traces/query?~(query~(expression~'service*28id*28name*3a*20*22${functionName}*22*2c*20type*3a*20*22AWS*3a*3aLambda*3a*3aFunction*22*29*29')`,
    );
    expect(text).toContain(functionTracesFilter(functionName));
  });

  it("shows the state of every alarm", () => {
    const alarmWidget = widgets.find((widget) => widget.type === "alarm");
    const alarmIds = Object.keys(template.findResources("AWS::CloudWatch::Alarm"));
    expect(((alarmWidget?.properties.alarms ?? []) as string[]).sort()).toEqual(
      alarmIds.map((id) => `getatt:${id}.Arn`).sort(),
    );
  });

  it("is linked from the outputs", () => {
    template.hasOutput(OUTPUT_KEYS.dashboardUrl, {
      Value: {
        "Fn::Join": [
          "",
          [
            "https://",
            { Ref: "AWS::Region" },
            ".console.aws.amazon.com/cloudwatch/home?region=",
            { Ref: "AWS::Region" },
            "#dashboards:name=",
            { Ref: onlyLogicalId(template, "AWS::CloudWatch::Dashboard") },
          ],
        ],
      },
    });
  });
});

describe("cdk-nag AwsSolutions", () => {
  it("reports no unacknowledged error or warning", () => {
    expect(nagFindings).toEqual([]);
  });
});

/** The ARN of a deployment group of the stack's CodeDeploy application, as the template writes it. */
function deploymentGroupArnOf(group: unknown) {
  return codeDeployArnOf("deploymentgroup", ...(group === "*" ? ["/*"] : ["/", group]));
}

/** The ARN of the stack's CodeDeploy application (`application`), or of what follows its name in `tail`. */
function codeDeployArnOf(kind: "application" | "deploymentgroup", ...tail: unknown[]) {
  return {
    "Fn::Join": [
      "",
      [
        "arn:",
        { Ref: "AWS::Partition" },
        ":codedeploy:",
        { Ref: "AWS::Region" },
        ":",
        { Ref: "AWS::AccountId" },
        `:${kind}:`,
        { Ref: onlyLogicalId(template, "AWS::CodeDeploy::Application") },
        ...tail,
      ],
    ],
  };
}
