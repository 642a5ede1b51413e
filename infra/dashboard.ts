import { Duration, Stack } from "aws-cdk-lib";
import type { HttpApi } from "aws-cdk-lib/aws-apigatewayv2";
import {
  AlarmStatusWidget,
  Dashboard,
  GraphWidget,
  type IAlarm,
  type IWidget,
  Metric,
  TextWidget,
} from "aws-cdk-lib/aws-cloudwatch";
import { Operation, type TableBase } from "aws-cdk-lib/aws-dynamodb";
import type { IFunction, Function as LambdaFunction } from "aws-cdk-lib/aws-lambda";
import { QueryDefinition, QueryString } from "aws-cdk-lib/aws-logs";
import { Construct } from "constructs";
import { METRIC_NAMES } from "../lambda/metrics.ts";
import { businessMetric } from "./alarms.ts";

export interface PlantStoreDashboardProps {
  readonly api: HttpApi;
  readonly handler: LambdaFunction;
  readonly table: TableBase;
  readonly alarms: IAlarm[];
}

const PERIOD = Duration.minutes(1);
const WIDTH = 8;
const HEIGHT = 6;

/**
 * Logs Insights over the function's JSON log: Lambda reports a cold start's init duration only in the
 * platform.report record of the first invocation, not as a CloudWatch metric.
 */
const INIT_DURATION_FILTER = `type = "platform.report" and ispresent(record.metrics.initDurationMs)`;
const INIT_DURATION_STATS =
  `count() as coldStarts, pct(record.metrics.initDurationMs, 50) as p50, ` +
  `pct(record.metrics.initDurationMs, 99) as p99, max(record.metrics.initDurationMs) as max by bin(5m)`;
export const INIT_DURATION_QUERY = `filter ${INIT_DURATION_FILTER}\n| stats ${INIT_DURATION_STATS}`;
/** The saved query's name after `<stack name>/`, under Logs Insights' "Saved queries". */
export const INIT_DURATION_QUERY_NAME = "cold-start-init-durations";

/** One page for the whole stack: traffic and answers, latency, the function, the business metrics, the table. */
export class PlantStoreDashboard extends Construct {
  /** The dashboard in the CloudWatch console of the stack's region. */
  readonly url: string;

  constructor(scope: Construct, id: string, props: PlantStoreDashboardProps) {
    super(scope, id);
    const region = Stack.of(this).region;

    const dashboard = new Dashboard(this, "Dashboard", {
      defaultInterval: Duration.hours(3),
      widgets: [
        apiRow(props.api, props.alarms),
        functionRow(props.handler),
        usageRow(props),
        [tracesLink(region, props.handler)],
      ],
    });

    this.url =
      `https://${region}.console.aws.amazon.com/cloudwatch/home?region=${region}` +
      `#dashboards:name=${dashboard.dashboardName}`;
  }
}

/** What callers see: requests and errors, latency, and the alarms' states. */
function apiRow(api: HttpApi, alarms: IAlarm[]): IWidget[] {
  return [
    graph("API requests and errors", [
      api.metricCount({ statistic: "Sum", label: "requests" }),
      api.metricClientError({ label: "4xx" }),
      api.metricServerError({ label: "5xx" }),
    ]),
    graph("API latency (ms)", [
      api.metricLatency({ statistic: "p50", label: "API p50" }),
      api.metricLatency({ statistic: "p99", label: "API p99" }),
      api.metricIntegrationLatency({ statistic: "p50", label: "integration p50" }),
      api.metricIntegrationLatency({ statistic: "p99", label: "integration p99" }),
    ]),
    new AlarmStatusWidget({ title: "Alarms", alarms, width: WIDTH, height: HEIGHT }),
  ];
}

/**
 * Cold starts as the function counts them (a metric, free to graph); their init durations are in Logs
 * Insights as a saved query rather than a query widget: a widget runs its query, billed per GB scanned,
 * on every load and auto-refresh of the dashboard; a saved query costs nothing until someone runs it.
 */
function coldStartsWidget(handler: LambdaFunction): IWidget {
  const stack = Stack.of(handler);
  const queryName = `${stack.stackName}/${INIT_DURATION_QUERY_NAME}`;
  new QueryDefinition(stack, "InitDurationQuery", {
    queryDefinitionName: queryName,
    queryString: new QueryString({
      filterStatements: [INIT_DURATION_FILTER],
      statsStatements: [INIT_DURATION_STATS],
    }),
    logGroups: [handler.logGroup],
  });
  return graph(`Cold starts (init durations: Logs Insights, saved query ${queryName})`, [
    businessMetric(handler, "ColdStart", { label: "cold starts" }),
  ]);
}

/** The function: duration, cold starts (from its log), invocations, errors and throttles. */
function functionRow(handler: LambdaFunction): IWidget[] {
  return [
    graph("Function duration (ms)", [
      handler.metricDuration({ statistic: "p50", label: "p50" }),
      handler.metricDuration({ statistic: "p99", label: "p99" }),
      handler.metricDuration({ statistic: "Maximum", label: "max" }),
    ]),
    coldStartsWidget(handler),
    graph("Function invocations, errors, throttles", [
      handler.metricInvocations({ label: "invocations" }),
      handler.metricErrors({ label: "errors" }),
      handler.metricThrottles({ label: "throttles" }),
    ]),
  ];
}

/** Capacity and outcomes: concurrency against the account's, the business metrics, the table. */
function usageRow({ handler, table }: PlantStoreDashboardProps): IWidget[] {
  return [
    graph("Concurrent executions (max)", [
      handler.metric("ConcurrentExecutions", { statistic: "Maximum", label: "function" }),
      new Metric({
        namespace: "AWS/Lambda",
        metricName: "ConcurrentExecutions",
        statistic: "Maximum",
        label: "account, all functions",
      }),
    ]),
    graph(
      "Outcomes (business metrics, per minute)",
      // One series per business metric the handler publishes (lambda/metrics.ts), for this function.
      METRIC_NAMES.map((metricName) => businessMetric(handler, metricName, { label: metricName })),
    ),
    graph("DynamoDB writes and throttles", [
      table.metricConsumedWriteCapacityUnits({ label: "consumed write units" }),
      table.metricConsumedReadCapacityUnits({ label: "consumed read units" }),
      table.metricThrottledRequestsForOperation(Operation.PUT_ITEM, { label: "throttled PutItem" }),
      table.metricThrottledRequestsForOperation(Operation.GET_ITEM, { label: "throttled GetItem" }),
    ]),
  ];
}

/** X-Ray's filter expression for the traces through the function's segment, which active tracing records. */
export function functionTracesFilter(functionName: string): string {
  return `service(id(name: "${functionName}", type: "AWS::Lambda::Function"))`;
}

/**
 * The function's traces in the CloudWatch console, the last 3 hours; and how to reach one request's trace
 * from its log line. The console reads its query in its own escaping: `*` and two hex digits per character.
 */
function tracesLink(region: string, handler: IFunction): TextWidget {
  const consoleEscaped = (text: string) =>
    text.replace(
      /[^A-Za-z0-9._-]/g,
      (character) => `*${character.charCodeAt(0).toString(16).padStart(2, "0")}`,
    );
  const [before, after] = functionTracesFilter("\0").split("\0").map(consoleEscaped);
  const tracesPage = `https://${region}.console.aws.amazon.com/cloudwatch/home?region=${region}#xray:traces`;
  const query = `/query?~(query~(expression~'${before}${handler.functionName}${after}')~context~(timeRange~(delta~10800000)))`;
  return new TextWidget({
    markdown: [
      `### Traces: [the function's requests in X-Ray](${tracesPage}${query})`,
      `Filter: \`${functionTracesFilter(handler.functionName)}\`. ` +
        `A request's log line carries its \`traceId\`: its trace is at \`${tracesPage}/<traceId>\`.`,
    ].join("\n\n"),
    width: 3 * WIDTH,
    height: 3,
  });
}

/** A graph of per-minute points. */
function graph(title: string, metrics: Metric[]): GraphWidget {
  const left = metrics.map((metric) => metric.with({ period: PERIOD }));
  return new GraphWidget({ title, left, width: WIDTH, height: HEIGHT });
}
