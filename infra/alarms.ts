import { Duration, Stack } from "aws-cdk-lib";
import type { HttpApi } from "aws-cdk-lib/aws-apigatewayv2";
import {
  Alarm,
  ComparisonOperator,
  type IMetric,
  MathExpression,
  Metric,
  TreatMissingData,
} from "aws-cdk-lib/aws-cloudwatch";
import { SnsAction } from "aws-cdk-lib/aws-cloudwatch-actions";
import { Operation, type TableBase } from "aws-cdk-lib/aws-dynamodb";
import { PolicyStatement, ServicePrincipal } from "aws-cdk-lib/aws-iam";
import type { Alias, IFunction } from "aws-cdk-lib/aws-lambda";
import { Topic } from "aws-cdk-lib/aws-sns";
import { EmailSubscription } from "aws-cdk-lib/aws-sns-subscriptions";
import { Construct } from "constructs";
import { describeRoutes } from "../lambda/http/routes.ts";
import {
  FAULT_METRIC,
  METRICS_DIMENSION,
  METRICS_NAMESPACE,
  METRICS_VERSION_DIMENSION,
  type MetricName,
} from "../lambda/metrics.ts";

export interface PlantStoreAlarmsProps {
  readonly api: HttpApi;
  readonly handler: IFunction;
  /** The alias the API invokes; the rollback alarms watch the version this deploy points it to. */
  readonly liveAlias: Alias;
  readonly table: TableBase;
  /** Subscribed to an SNS topic that every operator alarm notifies; no topic without it. */
  readonly alarmEmail: string | undefined;
  /** The stage's own 429s: requests the gateway refused for the shared rate, before the function ran. */
  readonly stageThrottles: IMetric;
  /** Requests Lambda refused to run for their size, which the gateway answers with its own 500. */
  readonly invokesTooLarge: IMetric;
}

/** The start of every rollback alarm's name: `<stack>-NewVersion…-v<version>` (CodeDeploy's role reads these). */
export function rollbackAlarmNamePrefix(stackName: string): string {
  return `${stackName}-${ROLLBACK_ALARM_ID_PREFIX}`;
}

const ROLLBACK_ALARM_ID_PREFIX = "NewVersion";

/**
 * The stage's 429s in a 5-minute sum that page: a burst beyond the burst limit refuses a few, a caller
 * (or a stranger) holding the stage at its rate refuses many, every period.
 */
const STAGE_THROTTLES_THRESHOLD = 10;

const PERIOD = Duration.minutes(5);
/**
 * The rollback alarms' period: a canary lasts 5 minutes, and CodeDeploy watches its alarms only while it
 * runs, so a 5-minute sum could only breach after the traffic had moved. A minute leaves the rest.
 */
const ROLLBACK_PERIOD = Duration.minutes(1);

/**
 * The 503s the function answers by design and counts by cause: a dependency down (the store, the issuer)
 * or a token naming a key the issuer's key set does not hold. None of them is a fault of ours.
 */
const CLASSIFIED_UNAVAILABLE: readonly MetricName[] = [
  "StoreUnavailable",
  "IssuerUnavailable",
  "UnknownSigningKeyHeld",
];

/**
 * Two kinds of alarms. The operator's (`alarms`, mailed with `alarmEmail`): the function's own classified
 * counts (its faults, the store or the issuer unavailable), crashes, throttles, and the gateway's 5xx that
 * the function did not classify, less the 500s of bodies too large for Lambda to run the function on; nothing
 * a caller can send moves them. The rollout's (`rollbackAlarms`,
 * watched by CodeDeploy): the new version's own faults and crashes only (docs/DEPLOY.md, "Rollouts").
 */
export class PlantStoreAlarms extends Construct {
  /** The operator's alarms, shown on the dashboard and mailed. */
  readonly alarms: Alarm[];
  /** The alarms CodeDeploy rolls a deployment back on: the new version's own faults and errors. */
  readonly rollbackAlarms: Alarm[];

  constructor(scope: Construct, id: string, props: PlantStoreAlarmsProps) {
    super(scope, id);
    const { api, handler, liveAlias, table } = props;
    // The version this deploy publishes and CodeDeploy shifts `live` to.
    const newVersion = liveAlias.version.version;

    this.rollbackAlarms = [
      this.newVersionAlarm(
        "NewVersionFaults",
        newVersion,
        businessMetric(handler, FAULT_METRIC, { period: ROLLBACK_PERIOD, version: newVersion }),
        "The new version answered a 500 (a bug of ours)",
      ),
      this.newVersionAlarm(
        "NewVersionErrors",
        newVersion,
        // Lambda's Errors (crashes and timeouts; the handler turns every expected failure into an answer)
        // through the live alias: the dimensions Lambda publishes alias invocations under.
        liveAlias.metricErrors({
          period: ROLLBACK_PERIOD,
          dimensionsMap: {
            FunctionName: handler.functionName,
            Resource: `${handler.functionName}:${liveAlias.aliasName}`,
            ExecutedVersion: newVersion,
          },
        }),
        "The new version crashed or timed out (Lambda Errors of the live alias's new version)",
      ),
    ];

    this.alarms = [
      this.alarmOnSum(
        "Api5xx",
        // FILL: a difference of series only has points where all of them do.
        new MathExpression({
          expression: `FILL(gateway5xx, 0) - FILL(invokestoolarge, 0) - ${CLASSIFIED_UNAVAILABLE.map((name) => `FILL(${name.toLowerCase()}, 0)`).join(" - ")}`,
          usingMetrics: {
            gateway5xx: api.metricServerError(),
            invokestoolarge: props.invokesTooLarge,
            ...Object.fromEntries(
              CLASSIFIED_UNAVAILABLE.map((name) => [name.toLowerCase(), businessMetric(handler, name)]),
            ),
          },
          label: "5xx answers but the function's classified 503s and the bodies too large for Lambda",
          period: PERIOD,
        }),
        5,
        `${describeRoutes()} answered 5xx the function did not classify (its own faults, crashes, timeouts, the gateway's errors; not a body too large for Lambda, a caller's doing)`,
      ),
      this.alarmOnSum(
        "Faults",
        businessMetric(handler, FAULT_METRIC),
        1,
        "The function answered a 500: a bug of ours, any version",
      ),
      this.alarmOnSum(
        "FunctionErrors",
        handler.metricErrors({ period: PERIOD }),
        1,
        "Handler crashed or timed out (any version)",
      ),
      this.alarmOnSum(
        "StoreUnavailable",
        businessMetric(handler, "StoreUnavailable"),
        5,
        "The function answered 503: DynamoDB unavailable or throttling past the store deadline",
      ),
      this.alarmOnSum(
        "IssuerUnavailable",
        businessMetric(handler, "IssuerUnavailable"),
        5,
        "The function answered 503: the token issuer's key set could not be fetched or read",
      ),
      this.alarmOnSum(
        "FunctionThrottles",
        handler.metricThrottles({ period: PERIOD }),
        1,
        "Handler throttled: its reserved concurrency or the account's concurrency limit reached",
      ),
      this.alarmOnSum(
        "StageThrottles",
        props.stageThrottles,
        STAGE_THROTTLES_THRESHOLD,
        "The stage refused requests with its own 429 (its rate or burst limit, or the account's, used up), " +
          "before the function ran: callers are being starved of the shared rate",
      ),
      this.alarmOnSum(
        "TableThrottles",
        // FILL: a sum of two series only has points where both do, and most periods throttle just one.
        new MathExpression({
          expression: "FILL(putItem, 0) + FILL(getItem, 0)",
          usingMetrics: {
            putItem: table.metricThrottledRequestsForOperation(Operation.PUT_ITEM),
            getItem: table.metricThrottledRequestsForOperation(Operation.GET_ITEM),
          },
          label: "Throttled PutItem + GetItem",
          period: PERIOD,
        }),
        1,
        "DynamoDB throttled PutItem or GetItem",
      ),
    ];

    if (props.alarmEmail !== undefined) this.notifyByEmail(props.alarmEmail);
  }

  /**
   * One SNS topic, subscribed by the address, that every operator alarm notifies. Its policy replaces
   * SNS's default one, so it must allow CloudWatch to publish beside the TLS-only Deny.
   */
  private notifyByEmail(alarmEmail: string): void {
    const topic = new Topic(this, "AlarmTopic", { displayName: "Plant Store alarms", enforceSSL: true });
    const stack = Stack.of(this);
    topic.addToResourcePolicy(
      new PolicyStatement({
        sid: "CloudWatchAlarmsOfThisAccountPublish",
        principals: [new ServicePrincipal("cloudwatch.amazonaws.com")],
        actions: ["sns:Publish"],
        resources: [topic.topicArn],
        conditions: {
          StringEquals: { "aws:SourceAccount": stack.account },
          ArnLike: {
            "aws:SourceArn": `arn:${stack.partition}:cloudwatch:${stack.region}:${stack.account}:alarm:*`,
          },
        },
      }),
    );
    topic.addSubscription(new EmailSubscription(alarmEmail));
    // Back to OK is mailed too: the operator learns that the condition ended without opening the console.
    for (const alarm of this.alarms) {
      alarm.addAlarmAction(new SnsAction(topic));
      alarm.addOkAction(new SnsAction(topic));
    }
  }

  private alarmOnSum(
    id: string,
    metric: IMetric,
    threshold: number,
    description: string,
    alarmName?: string,
  ): Alarm {
    return new Alarm(this, id, {
      alarmName,
      metric,
      threshold,
      evaluationPeriods: 1,
      comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      treatMissingData: TreatMissingData.NOT_BREACHING,
      alarmDescription: `${description} (sum >= ${threshold} in ${describedPeriod(metric)})`,
    });
  }

  /**
   * A rollback alarm on one version's metric, named after that version: each deploy replaces it with a
   * new alarm, which starts without data (OK), so an alarm left in ALARM by an earlier version cannot stop
   * the new one (CloudWatch keeps an updated alarm's state; a new alarm has none).
   */
  private newVersionAlarm(
    id: `${typeof ROLLBACK_ALARM_ID_PREFIX}${string}`,
    version: string,
    metric: IMetric,
    description: string,
  ): Alarm {
    // `id` starts with ROLLBACK_ALARM_ID_PREFIX, so the name starts with rollbackAlarmNamePrefix().
    return this.alarmOnSum(id, metric, 1, description, `${Stack.of(this).stackName}-${id}-v${version}`);
  }
}

/** The period an alarm evaluates `metric` over, as its description says it: "1 minute", "5 minutes". */
function describedPeriod(metric: IMetric): string {
  const { metricStat, mathExpression } = metric.toMetricConfig();
  const minutes = (
    metricStat?.period ?? Duration.seconds(mathExpression?.period ?? PERIOD.toSeconds())
  ).toMinutes();
  return minutes === 1 ? "1 minute" : `${minutes} minutes`;
}

/**
 * A business metric of the function's log line (lambda/metrics.ts), summed per PERIOD unless told; with
 * `version`, that published version's own (only `Fault` carries the version).
 */
export function businessMetric(
  handler: IFunction,
  metricName: string,
  { version, ...options }: { period?: Duration; label?: string; version?: string } = {},
): Metric {
  return new Metric({
    namespace: METRICS_NAMESPACE,
    metricName,
    dimensionsMap: {
      [METRICS_DIMENSION]: handler.functionName,
      ...(version === undefined ? {} : { [METRICS_VERSION_DIMENSION]: version }),
    },
    statistic: "Sum",
    period: PERIOD,
    ...options,
  });
}
