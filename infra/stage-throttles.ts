import { Duration } from "aws-cdk-lib";
import { type IMetric, Metric } from "aws-cdk-lib/aws-cloudwatch";
import { FilterPattern, type ILogGroup, MetricFilter } from "aws-cdk-lib/aws-logs";
import { Construct } from "constructs";
import { METRICS_NAMESPACE } from "../lambda/metrics.ts";

/** The metric of the stage's own 429s, in the function's namespace, per API (the access log's `apiId`). */
export const STAGE_THROTTLED_METRIC = "StageThrottled";

/**
 * A 429 the stage answered itself: the access log's status is 429 and no integration ran (API Gateway
 * writes `-` for a context variable without value). The gateway's throttle refuses a request before the
 * function sees it, so none of these is one of the function's answers; in AWS/ApiGateway they are hidden
 * among the 4xx of the function's refusals. The access log writes every field as a string.
 */
export const STAGE_THROTTLED_PATTERN = '{ ($.status = "429") && ($.integrationStatus = "-") }';

export interface StageThrottlesProps {
  /** The stage's access log, one JSON line per request (infra/plant-store-stack.ts, ACCESS_LOG_FIELDS). */
  readonly accessLogGroup: ILogGroup;
  /** The HTTP API's id, which each access-log line carries as `apiId`. */
  readonly apiId: string;
}

/** Counts the stage's own 429s from its access log, for an alarm that says when callers are starved. */
export class StageThrottles extends Construct {
  readonly metric: IMetric;

  constructor(scope: Construct, id: string, props: StageThrottlesProps) {
    super(scope, id);
    const filter = new MetricFilter(this, "Filter", {
      logGroup: props.accessLogGroup,
      filterPattern: FilterPattern.literal(STAGE_THROTTLED_PATTERN),
      metricNamespace: METRICS_NAMESPACE,
      metricName: STAGE_THROTTLED_METRIC,
      metricValue: "1",
      dimensions: { ApiId: "$.apiId" },
    });
    this.metric = new Metric({
      namespace: METRICS_NAMESPACE,
      metricName: filter.metric().metricName,
      dimensionsMap: { ApiId: props.apiId },
      statistic: "Sum",
      period: Duration.minutes(5),
    });
  }
}
