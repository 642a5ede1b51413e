import { CfnOutput, Duration, RemovalPolicy, Stack, type StackProps, Validations } from "aws-cdk-lib";
import { AccessLogFormat } from "aws-cdk-lib/aws-apigateway";
import {
  CorsHttpMethod,
  HttpApi,
  HttpMethod,
  HttpStage,
  type IHttpRouteAuthorizer,
  LogGroupLogDestination,
  PayloadFormatVersion,
} from "aws-cdk-lib/aws-apigatewayv2";
import { HttpLambdaIntegration } from "aws-cdk-lib/aws-apigatewayv2-integrations";
import { BillingMode, Table, TableBase, TableEncryption } from "aws-cdk-lib/aws-dynamodb";
import { PolicyStatement } from "aws-cdk-lib/aws-iam";
import { Alias, Function as LambdaFunction, Tracing } from "aws-cdk-lib/aws-lambda";
import { LogGroup, RetentionDays } from "aws-cdk-lib/aws-logs";
import type { Construct } from "constructs";
import { DEFAULT_STORE_DEADLINE_MS } from "../lambda/defaults.ts";
import { describeRoutes, ROUTES } from "../lambda/http/routes.ts";
import { AccessLogCount, INVOKE_TOO_LARGE, STAGE_THROTTLED } from "./access-log-counts.ts";
import { PlantStoreAlarms } from "./alarms.ts";
import { addTokenIssuerOutputs, CognitoTokenIssuer } from "./cognito-token-issuer.ts";
import type { ExternalIssuerConfig, PlantStoreConfig } from "./config.ts";
import { CORS_ALLOW_HEADERS, CORS_EXPOSE_HEADERS, CORS_MAX_AGE_SECONDS } from "./cors.ts";
import { CustomDomain } from "./custom-domain.ts";
import { PlantStoreDashboard } from "./dashboard.ts";
import { DeliveredKeySet } from "./delivered-key-set.ts";
import { EdgeProtection, type EdgeProtectionProps } from "./edge-protection.ts";
import { HANDLER_SETTING, handlerCode } from "./handler-code.ts";
import { ownFunction } from "./own-function.ts";
import { PLANTS_PARTITION_KEY, PLANTS_TABLE_KEEPING } from "./plants-table.ts";
import { PreTrafficCheck } from "./pre-traffic-check.ts";
import { LIVE_ALIAS_NAME, SafeRollout } from "./rollout.ts";
import { VENDED_LOGS_PREFIX } from "./rules/access-log-group-name.ts";
import { OUTPUT_KEYS } from "./stack-outputs.ts";

export interface PlantStoreStackProps extends StackProps {
  readonly config: PlantStoreConfig;
  /** With `-c edgeProtection=waf`: CloudFront and the web ACL in front, the API closed to anything else. */
  readonly edgeProtection?: EdgeProtectionProps;
}

/** How long the handler keeps retrying the store before it answers 503 (the handler's default). */
export const STORE_DEADLINE = Duration.millis(DEFAULT_STORE_DEADLINE_MS);
/**
 * Comfortably above STORE_DEADLINE: a cold start also pays for init and the first JWKS fetch before the
 * store is tried, and a timeout would turn the handler's own 503 into the gateway's bare 500. It stays far
 * below the HTTP API's 30 s integration limit.
 */
export const FUNCTION_TIMEOUT = Duration.seconds(10);

/** POST /plants: HTTP API -> Lambda -> DynamoDB, with a Cognito user pool issuing machine tokens by default. */
export class PlantStoreStack extends Stack {
  /** The HTTP API, its stage and its access log, for what is built around the stack (the multi-Region routing). */
  readonly api: HttpApi;
  readonly stage: HttpStage;
  readonly accessLogGroup: LogGroup;

  constructor(scope: Construct, id: string, props: PlantStoreStackProps) {
    super(scope, id, props);
    const { config } = props;

    const table = this.createOrImportTable(config.existingTableName);
    const { tokenIssuer } = config;
    const cognitoIssuer =
      tokenIssuer.kind === "cognito" ? new CognitoTokenIssuer(this, "TokenIssuer", tokenIssuer) : undefined;
    const issuer = cognitoIssuer?.trustedIssuer ?? (tokenIssuer as ExternalIssuerConfig);
    const { handler, liveAlias } = this.createHandler(config, table, issuer);
    new DeliveredKeySet(this, "KeySetDelivery", { handler, issuer });
    const edgeProtection =
      props.edgeProtection && new EdgeProtection(this, "EdgeProtection", props.edgeProtection);
    this.api = this.createApi(config, liveAlias, edgeProtection?.authorizer);
    this.accessLogGroup = new LogGroup(this, "ApiAccessLogGroup", {
      // Under /aws/vendedlogs/: covered by the account's CloudWatch Logs resource policy as it is
      // (infra/rules/access-log-group-name.ts says why).
      logGroupName: `${VENDED_LOGS_PREFIX}apigateway/${this.stackName}/access`,
      retention: RetentionDays.ONE_MONTH,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    // The `$default` stage: deployed on every change, throttled, one JSON access-log line per request.
    this.stage = new HttpStage(this, "DefaultStage", {
      httpApi: this.api,
      stageName: "$default",
      autoDeploy: true,
      throttle: { rateLimit: config.throttleRateLimit, burstLimit: config.throttleBurstLimit },
      accessLogSettings: {
        destination: new LogGroupLogDestination(this.accessLogGroup),
        format: AccessLogFormat.custom(JSON.stringify(ACCESS_LOG_FIELDS)),
      },
    });

    const stageThrottles = new AccessLogCount(this, "StageThrottles", STAGE_THROTTLED);
    const invokesTooLarge = new AccessLogCount(this, "InvokesTooLarge", INVOKE_TOO_LARGE);
    const alarms = new PlantStoreAlarms(this, "Alarms", {
      api: this.api,
      handler,
      liveAlias,
      table,
      alarmEmail: config.alarmEmail,
      stageThrottles: stageThrottles.metric,
      invokesTooLarge: invokesTooLarge.metric,
    });
    const preTrafficCheck = new PreTrafficCheck(this, "PreTrafficCheck", { probedFunction: handler });
    const rollout = new SafeRollout(this, "Rollout", {
      alias: liveAlias,
      deployment: config.deployment,
      rollbackAlarms: alarms.rollbackAlarms,
      preTrafficHook: preTrafficCheck.hook,
    });
    preTrafficCheck.allowDeploymentAccess(rollout.deploymentGroup, liveAlias);
    const dashboard = new PlantStoreDashboard(this, "Dashboard", {
      api: this.api,
      handler,
      table,
      alarms: [...alarms.alarms, ...alarms.rollbackAlarms],
    });
    const customDomain =
      config.customDomain &&
      new CustomDomain(this, "CustomDomain", { ...config.customDomain, api: this.api, stage: this.stage });

    // What `npm run token -- --stack`, docs/DEPLOY.md and the operator read after a deploy.
    const output = (key: string, value: string, description?: string) =>
      new CfnOutput(this, key, { value, description });
    // Where callers POST: the distribution's, else the custom domain's; the $default stage has no path
    // segment of its own.
    const plantsUrl =
      edgeProtection?.plantsUrl ?? customDomain?.plantsUrl ?? `${this.api.apiEndpoint}/plants`;
    output(OUTPUT_KEYS.apiUrl, plantsUrl, "POST a NewPlant here with Authorization: Bearer <access token>");
    if (customDomain?.dnsTargetToSet !== undefined) {
      output(
        OUTPUT_KEYS.customDomainTarget,
        customDomain.dnsTargetToSet,
        "Point the custom domain's DNS record here (a CNAME, or an alias record)",
      );
    }
    output(OUTPUT_KEYS.dashboardUrl, dashboard.url);
    output(OUTPUT_KEYS.deploymentApplication, rollout.deploymentGroup.application.applicationName);
    output(
      OUTPUT_KEYS.deploymentGroup,
      rollout.deploymentGroup.deploymentGroupName,
      "The CodeDeploy deployment group that moves the live alias from version to version",
    );
    output(OUTPUT_KEYS.jwtIssuer, issuer.issuer);
    output(OUTPUT_KEYS.tableName, table.tableName);
    output(
      OUTPUT_KEYS.functionName,
      handler.functionName,
      "The function whose live alias CodeDeploy moves; its published versions are kept",
    );
    output(OUTPUT_KEYS.functionLogGroupName, handler.logGroup.logGroupName);
    output(OUTPUT_KEYS.accessLogGroupName, this.accessLogGroup.logGroupName);
    if (cognitoIssuer) addTokenIssuerOutputs(this, cognitoIssuer);
  }

  /**
   * The plants table: a new one, retained and deletion-protected (infra/rules/table-retention.ts says why
   * Retain, not RetainExceptOnCreate); or, with `-c tableName=…`, the one a destroyed stack retained, so
   * that a redeploy serves the plants it stored (docs/DEPLOY.md).
   */
  private createOrImportTable(existingTableName: string | undefined): TableBase {
    if (existingTableName !== undefined) {
      const imported = Table.fromTableName(this, "PlantsTable", existingTableName);
      // fromTableName returns a TableBase typed as ITable; the alarms and dashboard need its per-operation
      // metrics, which only TableBase declares.
      if (!(imported instanceof TableBase)) throw new Error("Table.fromTableName returned no TableBase");
      return imported;
    }
    return new Table(this, "PlantsTable", {
      partitionKey: PLANTS_PARTITION_KEY,
      billingMode: BillingMode.PAY_PER_REQUEST,
      // Encrypted at rest with the AWS managed key aws/dynamodb: key use shows in CloudTrail, no key to manage.
      encryption: TableEncryption.AWS_MANAGED,
      ...PLANTS_TABLE_KEEPING,
    });
  }

  /**
   * The function, published as a version behind the alias the API invokes, with its own log group and a
   * role of its own instead of the default one, which carries the AWSLambdaBasicExecutionRole managed
   * policy (log writes to every log group in the account): this one writes to its own and touches one table.
   */
  private createHandler(config: PlantStoreConfig, table: TableBase, issuer: ExternalIssuerConfig) {
    // PutItem stores a plant; GetItem (after a failed condition) tells a replay from a conflict.
    const tableAccess = new PolicyStatement({
      actions: ["dynamodb:PutItem", "dynamodb:GetItem"],
      resources: [table.tableArn],
    });
    const roleDescription = "Plant Store handler: its log group, PutItem and GetItem on the plants table";
    const handler = ownFunction(this, "Handler", roleDescription, [tableAccess], (common) => {
      if (config.tracing) {
        Validations.of(common.role).acknowledge({
          id: "AwsSolutions-IAM5[Resource::*]",
          reason:
            "Active tracing: xray:PutTraceSegments and xray:PutTelemetryRecords, which X-Ray grants on no " +
            "resource narrower than *.",
        });
      }
      return new LambdaFunction(this, "Handler", {
        ...common,
        code: handlerCode(),
        handler: HANDLER_SETTING,
        memorySize: config.memorySizeMb,
        timeout: FUNCTION_TIMEOUT,
        reservedConcurrentExecutions: config.reservedConcurrency,
        // Lambda records each sampled invocation and its init; each log line carries its traceId.
        tracing: config.tracing ? Tracing.ACTIVE : Tracing.DISABLED,
        // Each deploy's version outlives the next deploy, so that an operator can point the alias back to
        // it; a version whose own deploy rolled back is deleted, not left behind outside the stack.
        currentVersionOptions: { removalPolicy: RemovalPolicy.RETAIN_ON_UPDATE_OR_DELETE },
        // Not NODE_OPTIONS=--enable-source-maps: it adds ~3.5 ms to every cold start (measured, ~40% of
        // the import). Stacks in the log are of the minified bundle; index.mjs.map ships beside it.
        environment: {
          TABLE_NAME: table.tableName,
          ...definedOnly({
            JWT_ISSUER: issuer.issuer,
            JWT_AUDIENCE: issuer.audience,
            JWT_CLIENT_IDS: issuer.clientIds,
            JWKS_URL: issuer.jwksUrl,
            REQUIRED_SCOPE: issuer.requiredScope,
          }),
          STORE_DEADLINE_MS: String(STORE_DEADLINE.toMilliseconds()),
        },
      });
    });
    // The API invokes the alias, never $LATEST: a deploy publishes a version and CodeDeploy moves the alias.
    const liveAlias = new Alias(this, "LiveAlias", {
      aliasName: LIVE_ALIAS_NAME,
      version: handler.currentVersion,
    });
    return { handler, liveAlias };
  }

  /** The HTTP API: one gateway route per operation of the routes table, all served by the live alias. */
  private createApi(
    config: PlantStoreConfig,
    liveAlias: Alias,
    authorizer: IHttpRouteAuthorizer | undefined,
  ) {
    const api = new HttpApi(this, "Api", {
      description: `Plant Store: ${describeRoutes()}`,
      createDefaultStage: false,
      // With a custom domain the generated execute-api URL is closed: callers use the domain (and, with
      // edge protection, only CloudFront reaches it), so nothing bypasses what stands in front of it.
      disableExecuteApiEndpoint: config.customDomain !== undefined,
      corsPreflight:
        config.corsAllowOrigins === undefined
          ? undefined
          : {
              allowOrigins: config.corsAllowOrigins,
              allowMethods: [...new Set(ROUTES.map(({ method }) => CorsHttpMethod[method]))],
              allowHeaders: [...CORS_ALLOW_HEADERS],
              exposeHeaders: [...CORS_EXPOSE_HEADERS],
              maxAge: Duration.seconds(CORS_MAX_AGE_SECONDS),
            },
    });
    const integration = new HttpLambdaIntegration("HandlerIntegration", liveAlias, {
      payloadFormatVersion: PayloadFormatVersion.VERSION_2_0,
    });
    for (const { method, path } of ROUTES) {
      api.addRoutes({ path, methods: [HttpMethod[method]], integration, authorizer });
    }
    Validations.of(api).acknowledge({
      id: "AwsSolutions-APIG4",
      reason:
        "The handler authorizes every request itself (JWT signature, issuer, client or audience, scope) " +
        "so that a missing or bad token gets the spec's Error body and a WWW-Authenticate header; a " +
        "gateway authorizer answers with its own body.",
    });
    return api;
  }
}

/** One JSON object per request; `$context` variables of HTTP APIs. */
const ACCESS_LOG_FIELDS = {
  apiId: "$context.apiId",
  requestId: "$context.requestId",
  requestTime: "$context.requestTime",
  sourceIp: "$context.identity.sourceIp",
  userAgent: "$context.identity.userAgent",
  routeKey: "$context.routeKey",
  protocol: "$context.protocol",
  status: "$context.status",
  responseLength: "$context.responseLength",
  responseLatency: "$context.responseLatency",
  integrationStatus: "$context.integrationStatus",
  integrationLatency: "$context.integrationLatency",
  integrationError: "$context.integrationErrorMessage",
  error: "$context.error.message",
};

function definedOnly(values: Record<string, string | undefined>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(values).filter((entry): entry is [string, string] => entry[1] !== undefined),
  );
}
