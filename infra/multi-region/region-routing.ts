import { Duration } from "aws-cdk-lib";
import { Alarm, ComparisonOperator, TreatMissingData } from "aws-cdk-lib/aws-cloudwatch";
import { FilterPattern, MetricFilter } from "aws-cdk-lib/aws-logs";
import { HealthCheck, HealthCheckType, InsufficientDataHealthStatusEnum } from "aws-cdk-lib/aws-route53";
import { Construct } from "constructs";
import { METRICS_NAMESPACE } from "../../lambda/metrics.ts";
import { SERVER_FAULT_ANSWER_PATTERN } from "../access-log-counts.ts";
import type { MultiRegionDomainConfig } from "../config.ts";
import { aliasRecords, CustomDomain } from "../custom-domain.ts";
import type { PlantStoreStack } from "../plant-store-stack.ts";

/**
 * The health alarm: the share of the Region's answers that are 5xx, any cause of ours (a 503 of a store
 * that cannot be reached counts: callers are better served elsewhere), but not the 500 API Gateway answers
 * for a body too large for Lambda: anyone can send those, and at the gateway's `5xx` share a stranger
 * could take a healthy Region out of DNS with them. Route 53 reads only single-metric alarms with a
 * standard statistic, so the share is one metric: every access-log line counts 1 if it is such a 5xx, else
 * 0 (the filter's default value, which CloudWatch Logs allows only without dimensions: so the API's id is
 * in the metric's name), and its Average is the share.
 */
export const UNHEALTHY_5XX_SHARE = 0.5;
export const HEALTH_PERIOD = Duration.minutes(1);
export const HEALTH_EVALUATION_PERIODS = 2;
/** The endpoint check: Route 53's standard interval, and failures in a row before it is unhealthy. */
export const ENDPOINT_CHECK_INTERVAL = Duration.seconds(30);
export const ENDPOINT_CHECK_FAILURES = 3;

/**
 * One Region's share of the one name: its regional custom domain (its own certificate), and a Route 53
 * latency record that answers with this Region while its health check is healthy. The health check is
 * healthy only while both of its children are: the Region's 5xx-share alarm is not in ALARM, and its API
 * endpoint accepts TCP connections on 443 (an endpoint that is down sends no metrics to alarm on).
 */
export class RegionRouting extends Construct {
  /** The health metric is made of `stack`'s access log (infra/access-log-counts.ts). */
  constructor(stack: PlantStoreStack, id: string, domain: MultiRegionDomainConfig) {
    super(stack, id);
    const { api, stage, accessLogGroup, region } = stack;
    const certificateArn = domain.certificateArns[region];
    if (certificateArn === undefined) throw new Error(`no certificate for ${region}`);
    const customDomain = new CustomDomain(this, "CustomDomain", {
      domainName: domain.domainName,
      certificateArn,
      hostedZoneId: undefined,
      api,
      stage,
    });

    const serverFaults = new MetricFilter(this, "ServerFaultAnswers", {
      logGroup: accessLogGroup,
      filterPattern: FilterPattern.literal(SERVER_FAULT_ANSWER_PATTERN),
      metricNamespace: METRICS_NAMESPACE,
      metricName: `ServerFaultAnswer-${api.apiId}`,
      metricValue: "1",
      defaultValue: 0,
    });
    const healthAlarm = new Alarm(this, "ServerErrorShare", {
      metric: serverFaults.metric({ statistic: "Average", period: HEALTH_PERIOD }),
      threshold: UNHEALTHY_5XX_SHARE,
      comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      evaluationPeriods: HEALTH_EVALUATION_PERIODS,
      datapointsToAlarm: HEALTH_EVALUATION_PERIODS,
      // No traffic is no evidence of a fault: a Region that left DNS returns once its minutes pass quietly.
      treatMissingData: TreatMissingData.NOT_BREACHING,
      alarmDescription:
        `At least ${UNHEALTHY_5XX_SHARE * 100}% of ${region}'s answers were 5xx of ours (not a body too large for Lambda) in each of ` +
        `${HEALTH_EVALUATION_PERIODS} minutes: Route 53 stops sending ${domain.domainName} here`,
    });
    const alarmCheck = new HealthCheck(this, "AlarmHealthCheck", {
      type: HealthCheckType.CLOUDWATCH_METRIC,
      alarmIdentifier: { region, name: healthAlarm.alarmName },
      insufficientDataHealthStatus: InsufficientDataHealthStatusEnum.HEALTHY,
    });
    const endpointCheck = new HealthCheck(this, "EndpointHealthCheck", {
      type: HealthCheckType.TCP,
      fqdn: customDomain.domainName.regionalDomainName,
      port: 443,
      requestInterval: ENDPOINT_CHECK_INTERVAL,
      failureThreshold: ENDPOINT_CHECK_FAILURES,
    });
    const healthCheck = new HealthCheck(this, "RegionHealthCheck", {
      type: HealthCheckType.CALCULATED,
      childHealthChecks: [alarmCheck, endpointCheck],
      healthThreshold: 2,
    });

    // Latency records, both following this Region's health.
    aliasRecords(this, "LatencyRecord", domain.hostedZoneId, domain.domainName, customDomain.domainName, {
      region,
      setIdentifier: region,
      healthCheck,
    });
  }
}
