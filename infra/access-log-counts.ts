import { Duration } from "aws-cdk-lib";
import type { IMetric } from "aws-cdk-lib/aws-cloudwatch";
import { FilterPattern, type ILogGroup, MetricFilter } from "aws-cdk-lib/aws-logs";
import { Construct } from "constructs";
import { METRICS_NAMESPACE } from "../lambda/metrics.ts";

/**
 * The stage's access log (one JSON line per request, infra/plant-store-stack.ts, ACCESS_LOG_FIELDS) tells
 * apart answers that AWS/ApiGateway counts together. It writes every field as a string, and `-` for a
 * context variable without value; `integrationStatus` is Lambda's own status for the invoke, not the
 * function's answer.
 */

/** The stage's own 429: the gateway's throttle refused the request before any integration ran. */
export const STAGE_THROTTLED = {
  metricName: "StageThrottled",
  filterPattern: '{ ($.status = "429") && ($.integrationStatus = "-") }',
};

/**
 * A request Lambda refused to run for its size (RequestEntityTooLargeException, 413): an invoke takes at
 * most 6 MB, the HTTP API up to 10 MB, so a body of about 6 MB (4.5 MB of a base64-encoded media type)
 * never reaches the function, and API Gateway answers its own 500. Anyone can send one, token or not: it
 * is the caller's doing, not a fault of the service.
 */
export const INVOKE_TOO_LARGE = {
  metricName: "InvokeTooLarge",
  filterPattern: '{ $.integrationStatus = "413" }',
};

/**
 * A 5xx answer that is not that refusal: the service failing (the function's 503s and 500s, a crash, a
 * timeout, the gateway's own errors).
 */
export const SERVER_FAULT_ANSWER_PATTERN = '{ ($.status = "5*") && ($.integrationStatus != "413") }';

/**
 * The 5-minute sum of the lines of `stack`'s access log that match a pattern, in the function's namespace,
 * per API (each line carries the HTTP API's id as `apiId`).
 */
export class AccessLogCount extends Construct {
  readonly metric: IMetric;

  /** `stack` is the PlantStoreStack, named by what is read of it (its module imports this one). */
  constructor(
    stack: Construct & { accessLogGroup: ILogGroup; api: { apiId: string } },
    id: string,
    count: { metricName: string; filterPattern: string },
  ) {
    super(stack, id);
    const filter = new MetricFilter(this, "Filter", {
      logGroup: stack.accessLogGroup,
      filterPattern: FilterPattern.literal(count.filterPattern),
      metricNamespace: METRICS_NAMESPACE,
      metricName: count.metricName,
      metricValue: "1",
      dimensions: { ApiId: "$.apiId" },
    });
    this.metric = filter.metric({
      dimensionsMap: { ApiId: stack.api.apiId },
      statistic: "Sum",
      period: Duration.minutes(5),
    });
  }
}
