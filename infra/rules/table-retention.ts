import { type DeployRule, finding, resourcesOfType, type TemplateResource } from "./deploy-rule.ts";

/**
 * Why Retain and not RetainExceptOnCreate: a deletion-protected table whose stack's first create fails is
 * deleted by the rollback only with RetainExceptOnCreate, and DynamoDB refuses that DeleteTable while the
 * protection is on (CloudFormation does not lift it): the stack ends ROLLBACK_FAILED and must be deleted by
 * hand before anything can be deployed again. With Retain the rollback leaves the new, empty table alone and
 * ends ROLLBACK_COMPLETE; the next `cdk deploy` deletes the rolled-back stack and creates it anew, beside a
 * table of a new generated name. The empty table costs nothing on demand; docs/DEPLOY.md says how to find
 * and remove it. Switching the protection on only after a first create succeeded would need a custom
 * resource that runs last, and a template that disagrees with the table (drift) for good.
 */
export const tableRetention: DeployRule = {
  id: "PlantStore-TableRetained",
  behaviour:
    "DynamoDB refuses DeleteTable while deletion protection is on, and CloudFormation does not lift it: with " +
    "DeletionPolicy RetainExceptOnCreate (or Delete) a first create that fails ends ROLLBACK_FAILED on the " +
    "table, and nothing can be deployed until the stack is deleted by hand. Without Retain on update and " +
    "deletion, or without the protection, the plants can be lost with the stack or by a delete by hand; a " +
    "fixed TableName would collide with the table a failed first create left behind.",
  documentation:
    "AWS CloudFormation User Guide, 'DeletionPolicy attribute' and 'UpdateReplacePolicy attribute'; Amazon " +
    "DynamoDB Developer Guide, 'Using deletion protection' (DeleteTable is refused while it is on)",
  fix:
    "give the table removalPolicy: RemovalPolicy.RETAIN (DeletionPolicy and UpdateReplacePolicy Retain), " +
    "deletionProtection: true, and no tableName (CloudFormation generates a new name on each create)",
  check({ template }) {
    // The multi-Region table (AWS::DynamoDB::GlobalTable) keeps the same policies, its protection per replica.
    const tables = [
      ...resourcesOfType(template, "AWS::DynamoDB::Table"),
      ...resourcesOfType(template, "AWS::DynamoDB::GlobalTable"),
    ];
    return tables.flatMap(([id, table]) => {
      const problems = [
        table.DeletionPolicy === "Retain" ? "" : `DeletionPolicy is ${table.DeletionPolicy ?? "Delete"}`,
        table.UpdateReplacePolicy === "Retain"
          ? ""
          : `UpdateReplacePolicy is ${table.UpdateReplacePolicy ?? "Delete"}`,
        deletionProtected(table) ? "" : "deletion protection is off",
        // The multi-Region table's name is fixed so that every Region's stack finds its replica by it
        // (docs/DEPLOY.md, "Multi-Region", says what a failed first create of it leaves).
        table.Type === "AWS::DynamoDB::GlobalTable" || table.Properties?.TableName === undefined
          ? ""
          : "the table has a fixed TableName",
      ].filter((problem) => problem !== "");
      return finding(id, problems.join("; ") || undefined);
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
