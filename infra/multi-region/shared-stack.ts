import { CfnOutput, Stack, type StackProps } from "aws-cdk-lib";
import { Billing, MultiRegionConsistency, TableEncryptionV2, TableV2 } from "aws-cdk-lib/aws-dynamodb";
import type { Construct } from "constructs";
import { addTokenIssuerOutputs, CognitoTokenIssuer } from "../cognito-token-issuer.ts";
import type { MultiRegionConfig, PlantStoreConfig } from "../config.ts";
import { PLANTS_PARTITION_KEY, PLANTS_TABLE_KEEPING } from "../plants-table.ts";
import { OUTPUT_KEYS } from "../stack-outputs.ts";

export interface PlantStoreSharedStackProps extends StackProps {
  readonly config: PlantStoreConfig;
  readonly multiRegion: MultiRegionConfig;
  /**
   * The MRSC table's fixed name: every Region's stack finds its replica by it (a replica has the table's
   * name). With `-c tableName=` the table exists already and is not created here.
   */
  readonly tableName: string;
}

/**
 * What every Region shares, in the first Region: the MRSC table (its replicas are in the other Regions)
 * and, unless the user brings an issuer, the one Cognito user pool whose tokens every Region accepts.
 */
export class PlantStoreSharedStack extends Stack {
  /** `undefined` with a bring-your-own issuer. */
  readonly tokenIssuer: CognitoTokenIssuer | undefined;

  constructor(scope: Construct, id: string, props: PlantStoreSharedStackProps) {
    super(scope, id, props);
    const { config, multiRegion, tableName } = props;
    if (config.existingTableName === undefined) {
      // The plants table with multi-Region strong consistency: a write succeeds once it is durable in a
      // second Region, and a strongly consistent read in any Region returns it. A replica in every serving
      // Region but this one, each with the single-Region table's protection (PLANTS_TABLE_KEEPING); with
      // two Regions, a witness.
      new TableV2(this, "PlantsTable", {
        tableName,
        partitionKey: PLANTS_PARTITION_KEY,
        billing: Billing.onDemand(),
        // As the single-Region table: the AWS managed key aws/dynamodb, in each Region.
        encryption: TableEncryptionV2.awsManagedKey(),
        multiRegionConsistency: MultiRegionConsistency.STRONG,
        replicas: multiRegion.regions.slice(1).map((region) => ({ region })),
        witnessRegion: multiRegion.witnessRegion,
        ...PLANTS_TABLE_KEEPING,
      });
      new CfnOutput(this, OUTPUT_KEYS.tableName, { value: tableName });
    }
    if (config.tokenIssuer.kind === "cognito") {
      this.tokenIssuer = new CognitoTokenIssuer(this, "TokenIssuer", config.tokenIssuer);
      addTokenIssuerOutputs(this, this.tokenIssuer);
      new CfnOutput(this, OUTPUT_KEYS.jwtIssuer, { value: this.tokenIssuer.issuerUrl });
    }
  }

  /** Whether there is anything to deploy: not with both an existing table and a bring-your-own issuer. */
  static isNeeded(config: PlantStoreConfig): boolean {
    return config.existingTableName === undefined || config.tokenIssuer.kind === "cognito";
  }
}
