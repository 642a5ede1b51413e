import { CfnOutput, Stack, type StackProps } from "aws-cdk-lib";
import type { Construct } from "constructs";
import { addTokenIssuerOutputs, CognitoTokenIssuer } from "../cognito-token-issuer.ts";
import type { MultiRegionConfig, PlantStoreConfig } from "../config.ts";
import { OUTPUT_KEYS } from "../stack-outputs.ts";
import { createGlobalPlantsTable } from "./global-plants-table.ts";

export interface PlantStoreSharedStackProps extends StackProps {
  readonly config: PlantStoreConfig;
  readonly multiRegion: MultiRegionConfig;
  /** The MRSC table's name; with `-c tableName=` the table exists already and is not created here. */
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
      createGlobalPlantsTable(this, "PlantsTable", {
        tableName,
        regions: multiRegion.regions,
        witnessRegion: multiRegion.witnessRegion,
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
