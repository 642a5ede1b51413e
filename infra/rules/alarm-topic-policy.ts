import { type DeployRule, finding, referencedLogicalId, resourcesOfType } from "./deploy-rule.ts";

interface Statement {
  Effect?: string;
  Principal?: { Service?: string | string[] };
  Action?: string | string[];
}

const asList = <T>(value: T | T[] | undefined): T[] =>
  value === undefined ? [] : Array.isArray(value) ? value : [value];

export const alarmTopicPolicy: DeployRule = {
  id: "PlantStore-AlarmTopicAllowsCloudWatch",
  behaviour:
    "A topic policy replaces SNS's default policy. A policy holding only a TLS-only Deny lets nobody " +
    "publish: the alarms go to ALARM and no e-mail ever arrives (the subscription confirmation does, " +
    "which hides the fault).",
  documentation:
    "Amazon CloudWatch User Guide, 'Using Amazon CloudWatch alarms' (an SNS topic policy must allow " +
    "cloudwatch.amazonaws.com to sns:Publish); Amazon SNS Developer Guide, 'Access policy' examples",
  fix: "add an Allow of sns:Publish for the service principal cloudwatch.amazonaws.com to the topic's policy",
  check({ template }) {
    const alarmTopics = new Set(
      resourcesOfType(template, "AWS::CloudWatch::Alarm").flatMap(([, alarm]) =>
        asList(alarm.Properties?.AlarmActions as unknown[] | undefined).map(referencedLogicalId),
      ),
    );
    return resourcesOfType(template, "AWS::SNS::TopicPolicy").flatMap(([policyId, policy]) => {
      const topics = asList(policy.Properties?.Topics as unknown[]).map(referencedLogicalId);
      const alarmTopic = topics.find((topic) => topic !== undefined && alarmTopics.has(topic));
      if (alarmTopic === undefined) return [];
      const statements = asList(
        (policy.Properties?.PolicyDocument as { Statement?: Statement[] } | undefined)?.Statement,
      );
      const allowsCloudWatch = statements.some(
        (statement) =>
          statement.Effect === "Allow" &&
          asList(statement.Principal?.Service).includes("cloudwatch.amazonaws.com") &&
          asList(statement.Action).some((action) => action === "sns:Publish" || action === "sns:*"),
      );
      if (allowsCloudWatch) return [];
      return finding(
        policyId,
        `the policy of alarm topic ${alarmTopic} does not allow cloudwatch.amazonaws.com to sns:Publish`,
      );
    });
  },
};
