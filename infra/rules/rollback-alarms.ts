import {
  type DeployRule,
  finding,
  referencedLogicalId,
  resourcesOfType,
  type TemplateResource,
} from "./deploy-rule.ts";

/** The dimensions that pin a metric to one published version: the handler's and Lambda's. */
export const VERSION_DIMENSIONS = ["FunctionVersion", "ExecutedVersion"] as const;

type Dimensions = { Name: string; Value: unknown }[];

/** The dimensions of every metric an alarm watches: its one metric's, or each of a math expression's. */
function watchedMetrics(alarm: TemplateResource): Dimensions[] {
  const properties = alarm.Properties ?? {};
  if (properties.MetricName !== undefined) return [(properties.Dimensions ?? []) as Dimensions];
  const queries = (properties.Metrics ?? []) as { MetricStat?: { Metric: { Dimensions?: Dimensions } } }[];
  return queries.flatMap((query) =>
    query.MetricStat === undefined ? [] : [query.MetricStat.Metric.Dimensions ?? []],
  );
}

/** Whether `value` holds the number of the version this deploy publishes: `Fn::GetAtt [<version>, Version]`. */
const mentionsVersion = (value: unknown): boolean => (JSON.stringify(value) ?? "").includes('"Version"]');

export const rollbackAlarms: DeployRule = {
  id: "PlantStore-RollbackAlarmsPerVersion",
  behaviour:
    "CodeDeploy stops and rolls back a deployment when any of its alarms is in ALARM, including one already " +
    "in ALARM when the deployment starts, and CloudWatch keeps an alarm's state when its definition is " +
    "updated. An alarm over every version (the API's 5xx, the function's Errors) lets the old version's " +
    "faults, a dependency's outage or a caller's forged tokens roll the new version back, and blocks " +
    "deploying a fix while the live version fails.",
  documentation:
    "AWS CodeDeploy User Guide, 'Monitoring deployments with CloudWatch alarms in CodeDeploy'; Amazon " +
    "CloudWatch API Reference, PutMetricAlarm (an update leaves the alarm's state unchanged); AWS Lambda " +
    "Developer Guide, 'Types of metrics for Lambda functions' (ExecutedVersion)",
  fix:
    "give the deployment group only alarms on the new version's own metrics (a FunctionVersion or " +
    "ExecutedVersion dimension of the version this deploy publishes), named after that version so that " +
    "each deploy starts with a new alarm",
  check({ template }) {
    return resourcesOfType(template, "AWS::CodeDeploy::DeploymentGroup").flatMap(([groupId, group]) => {
      const configured =
        (group.Properties?.AlarmConfiguration as { Alarms?: { Name: unknown }[] } | undefined)?.Alarms ?? [];
      return configured.flatMap(({ Name }) => {
        const alarmId = referencedLogicalId(Name);
        const alarm = alarmId === undefined ? undefined : template.Resources?.[alarmId];
        if (alarmId === undefined || alarm === undefined) {
          return finding(groupId, `rollback alarm ${JSON.stringify(Name)} is not one of the stack's`);
        }
        const metrics = watchedMetrics(alarm);
        const perVersion = metrics.every((dimensions) =>
          dimensions.some(
            ({ Name: name, Value }) => VERSION_DIMENSIONS.includes(name as never) && mentionsVersion(Value),
          ),
        );
        const problems = [
          metrics.length > 0 && perVersion ? "" : "watches a metric that is not the published version's own",
          mentionsVersion(alarm.Properties?.AlarmName)
            ? ""
            : "keeps its name (and state) from one version to the next",
        ].filter((problem) => problem !== "");
        if (problems.length === 0) return [];
        return finding(alarmId, `rollback alarm ${alarmId} ${problems.join(" and ")}`);
      });
    });
  },
};
