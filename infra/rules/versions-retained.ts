import { type DeployRule, finding, referencedLogicalId, resourcesOfType } from "./deploy-rule.ts";

export const versionsRetained: DeployRule = {
  id: "PlantStore-VersionsRetained",
  behaviour:
    "CloudFormation deletes a published Lambda version when a deploy replaces it: once a rollout completed, " +
    "the previous version is gone and an operator cannot point the alias back to it by hand.",
  documentation:
    "AWS Lambda Developer Guide, 'Manage Lambda function versions' and 'Create an alias' (update-alias); " +
    "AWS CloudFormation User Guide, 'DeletionPolicy attribute'",
  fix:
    "keep published versions: currentVersionOptions: { removalPolicy: RemovalPolicy.RETAIN_ON_UPDATE_OR_DELETE } " +
    "on the function",
  check({ template }) {
    return resourcesOfType(template, "AWS::Lambda::Alias").flatMap(([, alias]) => {
      if (alias.UpdatePolicy?.CodeDeployLambdaAliasUpdate === undefined) return [];
      const versionId = referencedLogicalId(alias.Properties?.FunctionVersion);
      const version = versionId === undefined ? undefined : template.Resources?.[versionId];
      if (versionId === undefined || version === undefined) return [];
      const kept = version.DeletionPolicy === "Retain" || version.DeletionPolicy === "RetainExceptOnCreate";
      if (kept && version.UpdateReplacePolicy === "Retain") return [];
      return finding(versionId, `published version ${versionId} is deleted when a deploy replaces it`);
    });
  },
};
