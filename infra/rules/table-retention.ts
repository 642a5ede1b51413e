import { type DeployRule, resourcesOfType, type TemplateResource } from "./deploy-rule.ts";

export const tableRetention: DeployRule = {
  id: "PlantStore-TableRetainExceptOnCreate",
  behaviour:
    "DeletionPolicy Retain also keeps a table whose stack's first create failed and rolled back: an empty, " +
    "orphaned table that the next deploy or a lookup by name mistakes for the one holding data. " +
    "RetainExceptOnCreate keeps the table on update, replacement and stack deletion, but not when its own " +
    "create is rolled back; deletion protection guards it against a delete by hand.",
  documentation:
    "AWS CloudFormation User Guide, 'DeletionPolicy attribute' (RetainExceptOnCreate) and 'UpdateReplacePolicy " +
    "attribute'; Amazon DynamoDB Developer Guide, 'Using deletion protection'",
  fix:
    "give the table removalPolicy: RemovalPolicy.RETAIN_ON_UPDATE_OR_DELETE (DeletionPolicy " +
    "RetainExceptOnCreate, UpdateReplacePolicy Retain) and deletionProtection: true",
  check({ template }) {
    // The multi-Region table (AWS::DynamoDB::GlobalTable) keeps the same policies, its protection per replica.
    const tables = [
      ...resourcesOfType(template, "AWS::DynamoDB::Table"),
      ...resourcesOfType(template, "AWS::DynamoDB::GlobalTable"),
    ];
    return tables.flatMap(([id, table]) => {
      const problems = [
        table.DeletionPolicy === "RetainExceptOnCreate"
          ? ""
          : `DeletionPolicy is ${table.DeletionPolicy ?? "Delete"}`,
        table.UpdateReplacePolicy === "Retain"
          ? ""
          : `UpdateReplacePolicy is ${table.UpdateReplacePolicy ?? "Delete"}`,
        deletionProtected(table) ? "" : "deletion protection is off",
      ].filter((problem) => problem !== "");
      return problems.length === 0 ? [] : [{ logicalId: id, problem: problems.join("; ") }];
    });
  },
};

/** A table's own deletion protection, or for a global table every replica's. */
function deletionProtected(table: TemplateResource): boolean {
  if (table.Type !== "AWS::DynamoDB::GlobalTable")
    return table.Properties?.DeletionProtectionEnabled === true;
  const replicas = (table.Properties?.Replicas ?? []) as { DeletionProtectionEnabled?: unknown }[];
  return replicas.length > 0 && replicas.every((replica) => replica.DeletionProtectionEnabled === true);
}
