import { type DeployRule, finding, knownParts, resourcesOfType } from "./deploy-rule.ts";

/** The names the stack may set explicitly, and the longest each service accepts. */
export const NAME_LIMITS = [
  { type: "AWS::Logs::LogGroup", property: "LogGroupName", max: 512 },
  { type: "AWS::CloudWatch::Alarm", property: "AlarmName", max: 255 },
  { type: "AWS::CloudWatch::Dashboard", property: "DashboardName", max: 255 },
  { type: "AWS::Logs::QueryDefinition", property: "Name", max: 255 },
  { type: "AWS::DynamoDB::Table", property: "TableName", max: 255 },
  { type: "AWS::Lambda::Function", property: "FunctionName", max: 64 },
  { type: "AWS::IAM::Role", property: "RoleName", max: 64 },
  { type: "AWS::SNS::Topic", property: "TopicName", max: 256 },
  { type: "AWS::CodeDeploy::DeploymentGroup", property: "DeploymentGroupName", max: 100 },
] as const;

/**
 * The length of a part resolved only at deploy, at most: the stack puts a published version's number
 * (a few digits) or a stack UUID's first block (8) into names, nothing longer.
 */
const UNRESOLVED_PART_MAX_LENGTH = 10;

export const nameLengths: DeployRule = {
  id: "PlantStore-NameLengths",
  behaviour:
    "Each service caps the length of a name; a name built from the stack name (up to 128 characters) or " +
    "from context can pass synth and be refused by the service in the middle of a deploy.",
  documentation:
    "The service quotas of each resource's name: CloudWatch Logs (log group 512), CloudWatch (alarm and " +
    "dashboard 255), Logs Insights query definition (255), DynamoDB (table 255), Lambda (function 64), " +
    "IAM (role 64), SNS (topic 256), CodeDeploy (deployment group 100)",
  fix: "choose a shorter stack name (-c stackName=…) or shorten the name built from it",
  check({ template }) {
    return NAME_LIMITS.flatMap(({ type, property, max }) =>
      resourcesOfType(template, type).flatMap(([id, resource]) => {
        const known = knownParts(resource.Properties?.[property]);
        if (known === undefined) return [];
        const length =
          known.parts.reduce((sum, part) => sum + (part?.length ?? UNRESOLVED_PART_MAX_LENGTH), 0) +
          known.delimiter.length * (known.parts.length - 1);
        if (length <= max) return [];
        return finding(id, `${property} may be ${length} characters long, over ${type}'s ${max}`);
      }),
    );
  },
};
