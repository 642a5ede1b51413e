import { type DeployRule, finding, knownParts, referencedLogicalId, resourcesOfType } from "./deploy-rule.ts";

export const VENDED_LOGS_PREFIX = "/aws/vendedlogs/";

export const accessLogGroupName: DeployRule = {
  id: "PlantStore-AccessLogVendedName",
  behaviour:
    "Turning on a stage's access logging adds its log group to the account's one CloudWatch Logs resource " +
    "policy, capped at 5,120 characters and never trimmed on destroy: on a Region with many earlier APIs the " +
    'stage fails with "Cannot enable logging. Policy document length … > 5120". Log groups named under ' +
    "/aws/vendedlogs/ are covered by a wildcard already in that policy.",
  documentation:
    "Amazon CloudWatch Logs User Guide, 'Enable logging from AWS services' (logs sent to CloudWatch Logs: " +
    "resource policy size limit, /aws/vendedlogs/)",
  fix: `name the access log group under ${VENDED_LOGS_PREFIX} (logGroupName of the stage's LogGroup)`,
  check({ template }) {
    const stages = [
      ...resourcesOfType(template, "AWS::ApiGatewayV2::Stage"),
      ...resourcesOfType(template, "AWS::ApiGateway::Stage"),
    ];
    return stages.flatMap(([stageId, stage]) => {
      const settings = (stage.Properties?.AccessLogSettings ?? stage.Properties?.AccessLogSetting) as
        | { DestinationArn?: unknown }
        | undefined;
      if (settings?.DestinationArn === undefined) return [];
      const logGroupId = referencedLogicalId(settings.DestinationArn);
      const logGroup = logGroupId === undefined ? undefined : template.Resources?.[logGroupId];
      const name = knownParts(logGroup?.Properties?.LogGroupName)?.parts[0];
      if (name?.startsWith(VENDED_LOGS_PREFIX)) return [];
      const arn = knownParts(settings.DestinationArn)?.parts.join("");
      if (logGroup === undefined && arn?.includes(`:log-group:${VENDED_LOGS_PREFIX}`)) return [];
      const named = name === undefined ? "unnamed (a generated name)" : `named "${name}"`;
      return finding(
        logGroupId ?? stageId,
        `the access log group of stage ${stageId} is ${named}, not under ${VENDED_LOGS_PREFIX}`,
      );
    });
  },
};
