/**
 * What every plants table is, whether the single-Region stack's (`Table`) or the multi-Region one's
 * (`TableV2`, a replica per Region): its key, and what keeps it and its data. Both stacks spread these,
 * so a change of retention reaches both (the deploy rule infra/rules/table-retention.ts checks both).
 */
import { RemovalPolicy } from "aws-cdk-lib";
import { type Attribute, AttributeType } from "aws-cdk-lib/aws-dynamodb";

/** A plant's id, a Number, is the whole key. */
export const PLANTS_PARTITION_KEY: Attribute = { name: "id", type: AttributeType.NUMBER };

/**
 * Kept whenever CloudFormation would delete it (Retain), even when its own first create rolls back: with
 * deletion protection on, DynamoDB refuses the delete and a failed first create would end
 * ROLLBACK_FAILED; retained, the rollback completes and leaves an empty table (docs/DEPLOY.md, "A failed
 * first deploy"; the rule infra/rules/table-retention.ts). Deletion protection against a delete by hand;
 * point-in-time recovery. TableV2 applies the protection and recovery to every replica.
 */
export const PLANTS_TABLE_KEEPING = {
  pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
  deletionProtection: true,
  removalPolicy: RemovalPolicy.RETAIN,
} as const;
