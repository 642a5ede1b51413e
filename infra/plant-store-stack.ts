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
import { PolicyStatement, Role, ServicePrincipal } from "aws-cdk-lib/aws-iam";
import {
  Alias,
  Architecture,
  Function as LambdaFunction,
  LoggingFormat,
  Runtime,
  Tracing,
} from "aws-cdk-lib/aws-lambda";
import { LogGroup, RetentionDays } from "aws-cdk-lib/aws-logs";
import type { Construct } from "constructs";
import { DEFAULT_REQUIRED_SCOPE, DEFAULT_STORE_DEADLINE_MS } from "../lambda/defaults.ts";
import { describeRoutes, ROUTES } from "../lambda/http/routes.ts";
import {
  AccessLogCount,
  INVOKE_TOO_LARGE_METRIC,
  INVOKE_TOO_LARGE_PATTERN,
  STAGE_THROTTLED_METRIC,
  STAGE_THROTTLED_PATTERN,
} from "./access-log-counts.ts";
import { PlantStoreAlarms } from "./alarms.ts";
import { addTokenIssuerOutputs, CognitoTokenIssuer } from "./cognito-token-issuer.ts";
import type { PlantStoreConfig } from "./config.ts";
import { CORS_ALLOW_HEADERS, CORS_EXPOSE_HEADERS, CORS_MAX_AGE_SECONDS } from "./cors.ts";
import { CustomDomain } from "./custom-domain.ts";
import { PlantStoreDashboard } from "./dashboard.ts";
import { DeliveredKeySet, type KeySetSource } from "./delivered-key-set.ts";
import { EdgeProtection } from "./edge-protection.ts";
import { HANDLER_SETTING, handlerCode } from "./handler-code.ts";
import { PLANTS_PARTITION_KEY, PLANTS_TABLE_KEEPING } from "./plants-table.ts";
import { PreTrafficCheck } from "./pre-traffic-check.ts";
import { dependOnRolePolicyOnly } from "./role-dependency.ts";
import { LIVE_ALIAS_NAME, SafeRollout } from "./rollout.ts";
import { VENDED_LOGS_PREFIX } from "./rules/access-log-group-name.ts";
import { OUTPUT_KEYS } from "./stack-outputs.ts";

export interface PlantStoreStackProps extends StackProps {
  readonly config: PlantStoreConfig;
  /** With `-c edgeProtection=waf`: the us-east-1 web ACL's ARN (infra/edge-web-acl-stack.ts). */
  readonly edgeWebAclArn?: string;
}

/** How long the handler keeps retrying the store before it answers 503 (the handler's default). */
export const STORE_DEADLINE = Duration.millis(DEFAULT_STORE_DEADLINE_MS);
/**
 * Comfortably above STORE_DEADLINE: a cold start also pays for init and the first JWKS fetch before the
 * store is tried, and a timeout would turn the handler's own 503 into the gateway's bare 500. It stays far
 * below the HTTP API's 30 s integration limit.
 */
export const FUNCTION_TIMEOUT = Duration.seconds(10);
const LOG_RETENTION = RetentionDays.ONE_MONTH;

/** The function and what it runs with: its log group, its role, and the alias the API invokes. */
interface HandlerParts {
  readonly handler: LambdaFunction;
  readonly logGroup: LogGroup;
  readonly liveAlias: Alias;
}

/** The HTTP API, its one stage and the stage's access log. */
interface ApiParts {
  readonly api: HttpApi;
  readonly stage: HttpStage;
  readonly accessLogGroup: LogGroup;
}

/** The Cognito issuer (unless the user brings one) and the environment that tells the handler about it. */
interface TokenVerification {
  readonly cognitoIssuer: CognitoTokenIssuer | undefined;
  readonly issuerUrl: string;
  readonly environment: Record<string, string>;
  /** Where the key set the function trusts at cold start comes from (infra/delivered-key-set.ts). */
  readonly keySetSource: KeySetSource;
}

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
    const tokenVerification = this.createTokenVerification(config.tokenIssuer);
    const handlerParts = this.createHandler(config, table, tokenVerification.environment);
    new DeliveredKeySet(this, "KeySetDelivery", {
      handler: handlerParts.handler,
      source: tokenVerification.keySetSource,
    });
    const edgeProtection = this.createEdgeProtection(config, props.edgeWebAclArn);
    const apiParts = this.createApi(config, handlerParts.liveAlias, edgeProtection?.authorizer);
    const { handler, liveAlias } = handlerParts;
    const { api, stage } = apiParts;
    this.api = api;
    this.stage = stage;
    this.accessLogGroup = apiParts.accessLogGroup;

    const accessLog = { accessLogGroup: apiParts.accessLogGroup, apiId: api.apiId };
    const stageThrottles = new AccessLogCount(this, "StageThrottles", {
      ...accessLog,
      metricName: STAGE_THROTTLED_METRIC,
      filterPattern: STAGE_THROTTLED_PATTERN,
    });
    const invokesTooLarge = new AccessLogCount(this, "InvokesTooLarge", {
      ...accessLog,
      metricName: INVOKE_TOO_LARGE_METRIC,
      filterPattern: INVOKE_TOO_LARGE_PATTERN,
    });
    const alarms = new PlantStoreAlarms(this, "Alarms", {
      api,
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
      api,
      handler,
      handlerLogGroup: handlerParts.logGroup,
      table,
      alarms: [...alarms.alarms, ...alarms.rollbackAlarms],
    });
    const customDomain =
      config.customDomain === undefined
        ? undefined
        : new CustomDomain(this, "CustomDomain", { config: config.customDomain, api, stage });

    this.addOutputs({
      table,
      handlerParts,
      apiParts,
      dashboard,
      rollout,
      customDomain,
      tokenVerification,
      plantsUrl: edgeProtection?.plantsUrl ?? customDomain?.plantsUrl,
    });
  }

  /** With `-c edgeProtection=waf`: CloudFront and the web ACL in front, the API closed to anything else. */
  private createEdgeProtection(config: PlantStoreConfig, webAclArn: string | undefined) {
    if (config.edgeProtection === "none") return undefined;
    if (config.customDomain === undefined || webAclArn === undefined) {
      throw new Error("edge protection needs the custom domain and the web ACL's ARN");
    }
    return new EdgeProtection(this, "EdgeProtection", {
      originDomainName: config.customDomain.domainName,
      webAclArn,
    });
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

  /** The function, published as a version behind the alias the API invokes, with its own log group and role. */
  private createHandler(
    config: PlantStoreConfig,
    table: TableBase,
    tokenEnvironment: Record<string, string>,
  ): HandlerParts {
    const logGroup = new LogGroup(this, "HandlerLogGroup", {
      retention: LOG_RETENTION,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    const role = this.createHandlerRole(logGroup, table);
    const handler = new LambdaFunction(this, "Handler", {
      code: handlerCode(),
      handler: HANDLER_SETTING,
      runtime: Runtime.NODEJS_24_X,
      architecture: Architecture.ARM_64,
      memorySize: config.memorySizeMb,
      timeout: FUNCTION_TIMEOUT,
      reservedConcurrentExecutions: config.reservedConcurrency,
      role,
      logGroup,
      loggingFormat: LoggingFormat.JSON,
      // Lambda records each sampled invocation and its init; each log line carries its traceId.
      tracing: config.tracing ? Tracing.ACTIVE : Tracing.DISABLED,
      // Each deploy's version outlives the next deploy, so that an operator can point the alias back to it;
      // a version whose own deploy rolled back is deleted, not left behind outside the stack.
      currentVersionOptions: { removalPolicy: RemovalPolicy.RETAIN_ON_UPDATE_OR_DELETE },
      // Not NODE_OPTIONS=--enable-source-maps: it adds ~3.5 ms to every cold start (measured, ~40% of
      // the import). Stacks in the log are of the minified bundle; index.mjs.map ships beside it.
      environment: {
        TABLE_NAME: table.tableName,
        ...tokenEnvironment,
        STORE_DEADLINE_MS: String(STORE_DEADLINE.toMilliseconds()),
      },
    });
    dependOnRolePolicyOnly(handler, role);
    if (config.tracing) {
      Validations.of(role).acknowledge({
        id: "AwsSolutions-IAM5[Resource::*]",
        reason:
          "Active tracing: xray:PutTraceSegments and xray:PutTelemetryRecords, which X-Ray grants on no " +
          "resource narrower than *.",
      });
    }
    // The API invokes the alias, never $LATEST: a deploy publishes a version and CodeDeploy moves the alias.
    const liveAlias = new Alias(this, "LiveAlias", {
      aliasName: LIVE_ALIAS_NAME,
      version: handler.currentVersion,
    });
    return { handler, logGroup, liveAlias };
  }

  /**
   * A role of our own instead of the default one, which carries the AWSLambdaBasicExecutionRole managed
   * policy (log writes to every log group in the account): this one writes to its own and touches one table.
   */
  private createHandlerRole(logGroup: LogGroup, table: TableBase): Role {
    const role = new Role(this, "HandlerRole", {
      assumedBy: new ServicePrincipal("lambda.amazonaws.com"),
      description: "Plant Store handler: its log group, PutItem and GetItem on the plants table",
    });
    logGroup.grantWrite(role);
    role.addToPrincipalPolicy(
      new PolicyStatement({
        // PutItem stores a plant; GetItem (after a failed condition) tells a replay from a conflict.
        actions: ["dynamodb:PutItem", "dynamodb:GetItem"],
        resources: [table.tableArn],
      }),
    );
    return role;
  }

  /** The HTTP API: one gateway route per operation of the routes table, all served by the live alias. */
  private createApi(
    config: PlantStoreConfig,
    liveAlias: Alias,
    authorizer: IHttpRouteAuthorizer | undefined,
  ): ApiParts {
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
      api.addRoutes({
        path,
        methods: [HttpMethod[method]],
        integration,
        ...(authorizer ? { authorizer } : {}),
      });
    }
    Validations.of(api).acknowledge({
      id: "AwsSolutions-APIG4",
      reason:
        "The handler authorizes every request itself (JWT signature, issuer, client or audience, scope) " +
        "so that a missing or bad token gets the spec's Error body and a WWW-Authenticate header; a " +
        "gateway authorizer answers with its own body.",
    });
    return { api, ...this.createStage(config, api) };
  }

  /** The `$default` stage: deployed on every change, throttled, one JSON access-log line per request. */
  private createStage(config: PlantStoreConfig, api: HttpApi): Omit<ApiParts, "api"> {
    const accessLogGroup = new LogGroup(this, "ApiAccessLogGroup", {
      // Under /aws/vendedlogs/: covered by the account's CloudWatch Logs resource policy as it is
      // (infra/rules/access-log-group-name.ts says why).
      logGroupName: `${VENDED_LOGS_PREFIX}apigateway/${this.stackName}/access`,
      retention: LOG_RETENTION,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    const stage = new HttpStage(this, "DefaultStage", {
      httpApi: api,
      stageName: "$default",
      autoDeploy: true,
      throttle: { rateLimit: config.throttleRateLimit, burstLimit: config.throttleBurstLimit },
      accessLogSettings: {
        destination: new LogGroupLogDestination(accessLogGroup),
        format: AccessLogFormat.custom(JSON.stringify(ACCESS_LOG_FIELDS)),
      },
    });
    return { stage, accessLogGroup };
  }

  /** What `npm run token -- --stack`, docs/DEPLOY.md and the operator read after a deploy. */
  private addOutputs(parts: {
    table: TableBase;
    handlerParts: HandlerParts;
    apiParts: ApiParts;
    dashboard: PlantStoreDashboard;
    rollout: SafeRollout;
    customDomain: CustomDomain | undefined;
    tokenVerification: TokenVerification;
    /** Where callers POST when not the execute-api URL: the distribution's, else the custom domain's. */
    plantsUrl: string | undefined;
  }): void {
    const { table, handlerParts, apiParts, dashboard, rollout, customDomain, tokenVerification } = parts;
    new CfnOutput(this, OUTPUT_KEYS.apiUrl, {
      // The $default stage has no path segment of its own.
      value: parts.plantsUrl ?? `${apiParts.api.apiEndpoint}/plants`,
      description: "POST a NewPlant here with Authorization: Bearer <access token>",
    });
    if (customDomain?.dnsTargetToSet !== undefined) {
      new CfnOutput(this, OUTPUT_KEYS.customDomainTarget, {
        value: customDomain.dnsTargetToSet,
        description: "Point the custom domain's DNS record here (a CNAME, or an alias record)",
      });
    }
    new CfnOutput(this, OUTPUT_KEYS.dashboardUrl, { value: dashboard.url });
    new CfnOutput(this, OUTPUT_KEYS.deploymentApplication, {
      value: rollout.deploymentGroup.application.applicationName,
    });
    new CfnOutput(this, OUTPUT_KEYS.deploymentGroup, {
      value: rollout.deploymentGroup.deploymentGroupName,
      description: "The CodeDeploy deployment group that moves the live alias from version to version",
    });
    new CfnOutput(this, OUTPUT_KEYS.jwtIssuer, { value: tokenVerification.issuerUrl });
    new CfnOutput(this, OUTPUT_KEYS.tableName, { value: table.tableName });
    new CfnOutput(this, OUTPUT_KEYS.functionName, {
      value: handlerParts.handler.functionName,
      description: "The function whose live alias CodeDeploy moves; its published versions are kept",
    });
    new CfnOutput(this, OUTPUT_KEYS.functionLogGroupName, { value: handlerParts.logGroup.logGroupName });
    new CfnOutput(this, OUTPUT_KEYS.accessLogGroupName, { value: apiParts.accessLogGroup.logGroupName });
    if (tokenVerification.cognitoIssuer) addTokenIssuerOutputs(this, tokenVerification.cognitoIssuer);
  }

  private createTokenVerification(tokenIssuer: PlantStoreConfig["tokenIssuer"]): TokenVerification {
    if (tokenIssuer.kind === "external") {
      return {
        cognitoIssuer: undefined,
        issuerUrl: tokenIssuer.issuer,
        environment: definedOnly({
          JWT_ISSUER: tokenIssuer.issuer,
          JWT_AUDIENCE: tokenIssuer.audience,
          JWT_CLIENT_IDS: tokenIssuer.clientIds,
          JWKS_URL: tokenIssuer.jwksUrl,
          REQUIRED_SCOPE: tokenIssuer.requiredScope,
        }),
        keySetSource:
          tokenIssuer.keySetFile === undefined
            ? { kind: "read-at-deploy", jwksUrl: tokenIssuer.jwksUrl ?? wellKnownJwksUrl(tokenIssuer.issuer) }
            : { kind: "file", ...tokenIssuer.keySetFile },
      };
    }
    const cognitoIssuer = new CognitoTokenIssuer(this, "TokenIssuer", {
      domainPrefix: tokenIssuer.domainPrefix,
      retained: tokenIssuer.retained,
    });
    return {
      cognitoIssuer,
      issuerUrl: cognitoIssuer.issuerUrl,
      environment: {
        JWT_ISSUER: cognitoIssuer.issuerUrl,
        // Cognito client-credentials access tokens carry no aud; client_id names the app client.
        JWT_CLIENT_IDS: cognitoIssuer.client.userPoolClientId,
        REQUIRED_SCOPE: DEFAULT_REQUIRED_SCOPE,
      },
      keySetSource: { kind: "read-at-deploy", jwksUrl: wellKnownJwksUrl(cognitoIssuer.issuerUrl) },
    };
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

/** Where the handler reads the key set without JWKS_URL (lambda/config.ts): the issuer's well-known path. */
function wellKnownJwksUrl(issuer: string): string {
  return `${issuer.replace(/\/+$/, "")}/.well-known/jwks.json`;
}

function definedOnly(values: Record<string, string | undefined>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(values).filter((entry): entry is [string, string] => entry[1] !== undefined),
  );
}
