import { Duration } from "aws-cdk-lib";
import type { HttpApi } from "aws-cdk-lib/aws-apigatewayv2";
import {
  Alarm,
  ComparisonOperator,
  type IMetric,
  MathExpression,
  TreatMissingData,
} from "aws-cdk-lib/aws-cloudwatch";
import { SnsAction } from "aws-cdk-lib/aws-cloudwatch-actions";
import { Operation, type TableBase } from "aws-cdk-lib/aws-dynamodb";
import type { Alias, IFunction } from "aws-cdk-lib/aws-lambda";
import { Topic } from "aws-cdk-lib/aws-sns";
import { EmailSubscription } from "aws-cdk-lib/aws-sns-subscriptions";
import { Construct } from "constructs";
import { describeRoutes } from "../lambda/http/routes.ts";

export interface PlantStoreAlarmsProps {
  readonly api: HttpApi;
  readonly handler: IFunction;
  /** The alias the API invokes; its errors are counted for the version it currently points to. */
  readonly liveAlias: Alias;
  readonly table: TableBase;
  /** Subscribed to an SNS topic that every alarm notifies; no topic without it. */
  readonly alarmEmail: string | undefined;
}

const PERIOD = Duration.minutes(5);

/**
 * One alarm per failure a caller would notice: answers 5xx, the function crashing or timing out, the
 * function hitting its concurrency cap, and DynamoDB throttling the writes.
 */
export class PlantStoreAlarms extends Construct {
  readonly alarms: Alarm[];
  readonly api5xx: Alarm;
  readonly functionErrors: Alarm;

  constructor(scope: Construct, id: string, props: PlantStoreAlarmsProps) {
    super(scope, id);
    const { api, handler, liveAlias, table } = props;

    // The handler answers 503 by design when the store stays unavailable past its deadline; a handful in
    // five minutes is worth a look, a single one is noise.
    this.api5xx = this.alarmOnSum(
      "Api5xx",
      api.metricServerError({ period: PERIOD }),
      5,
      `${describeRoutes()} answered 5xx`,
    );
    this.functionErrors = this.alarmOnSum(
      "FunctionErrors",
      liveVersionErrors(handler, liveAlias),
      1,
      "Handler crashed (the live alias's current version)",
    );

    this.alarms = [
      this.api5xx,
      this.functionErrors,
      this.alarmOnSum(
        "FunctionThrottles",
        handler.metricThrottles({ period: PERIOD }),
        1,
        "Handler throttled: its reserved concurrency or the account's concurrency limit reached",
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

  /** One SNS topic, subscribed by the address, that every alarm notifies. */
  private notifyByEmail(alarmEmail: string): void {
    const topic = new Topic(this, "AlarmTopic", { displayName: "Plant Store alarms", enforceSSL: true });
    topic.addSubscription(new EmailSubscription(alarmEmail));
    for (const alarm of this.alarms) alarm.addAlarmAction(new SnsAction(topic));
  }

  private alarmOnSum(id: string, metric: IMetric, threshold: number, description: string): Alarm {
    return new Alarm(this, id, {
      metric,
      threshold,
      evaluationPeriods: 1,
      comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      treatMissingData: TreatMissingData.NOT_BREACHING,
      alarmDescription: `${description} (sum >= ${threshold} in ${PERIOD.toMinutes()} minutes)`,
    });
  }
}

/**
 * Errors counts crashes and timeouts only: the handler turns every expected failure into an answer.
 * Counted for the alias's current version only (ExecutedVersion): while CodeDeploy shifts traffic,
 * the new version's crashes roll it back and the old version's do not.
 */
function liveVersionErrors(handler: IFunction, liveAlias: Alias): IMetric {
  return liveAlias.metricErrors({
    period: PERIOD,
    dimensionsMap: {
      FunctionName: handler.functionName,
      Resource: `${handler.functionName}:${liveAlias.aliasName}`,
      ExecutedVersion: liveAlias.version.version,
    },
  });
}
