import { Billing, MultiRegionConsistency, TableEncryptionV2, TableV2 } from "aws-cdk-lib/aws-dynamodb";
import type { Construct } from "constructs";
import { PLANTS_PARTITION_KEY, PLANTS_TABLE_KEEPING } from "../plants-table.ts";

export interface GlobalPlantsTableProps {
  /** The fixed name every Region's stack finds its replica by (a replica has the table's name). */
  readonly tableName: string;
  /** The serving Regions; the first is the stack's own, the others get replicas. */
  readonly regions: readonly string[];
  readonly witnessRegion: string | undefined;
}

/**
 * The plants table with multi-Region strong consistency: a write succeeds once it is durable in a second
 * Region, and a strongly consistent read in any Region returns it. A replica in every serving Region,
 * each with the single-Region table's protection (PLANTS_TABLE_KEEPING); with two Regions, a witness.
 */
export function createGlobalPlantsTable(
  scope: Construct,
  id: string,
  props: GlobalPlantsTableProps,
): TableV2 {
  const [, ...replicaRegions] = props.regions;
  return new TableV2(scope, id, {
    tableName: props.tableName,
    partitionKey: PLANTS_PARTITION_KEY,
    billing: Billing.onDemand(),
    // As the single-Region table: the AWS managed key aws/dynamodb, in each Region.
    encryption: TableEncryptionV2.awsManagedKey(),
    multiRegionConsistency: MultiRegionConsistency.STRONG,
    replicas: replicaRegions.map((region) => ({ region })),
    witnessRegion: props.witnessRegion,
    ...PLANTS_TABLE_KEEPING,
  });
}
