import type { App } from "aws-cdk-lib";
import { describeRoutes } from "../../lambda/http/routes.ts";
import { ContextError, type MultiRegionConfig, type PlantStoreConfig } from "../config.ts";
import { PlantStoreStack } from "../plant-store-stack.ts";
import { RegionRouting } from "./region-routing.ts";
import { PlantStoreSharedStack } from "./shared-stack.ts";

/**
 * The multi-Region Plant Store (docs/DEPLOY.md, "Multi-Region"): the shared stack `<stack name>-shared` in
 * the first Region, and a PlantStoreStack `<stack name>-<region>` per Region serving from that Region's
 * replica and trusting the one issuer. Each Region's stack depends on the shared one, so `cdk deploy --all`
 * deploys that first. Returns the Regions' stacks, in the order given.
 */
export function addMultiRegionPlantStore(
  app: App,
  stackName: string,
  config: PlantStoreConfig,
  multiRegion: MultiRegionConfig,
): PlantStoreStack[] {
  const { regions, domain } = multiRegion;
  const [firstRegion] = regions;
  const regionalStackName = (region: string) => `${stackName}-${region}`;
  if (Math.max(...regions.map((region) => regionalStackName(region).length)) > 128) {
    throw new ContextError(
      `Context "stackName" is too long for multi-Region: "<stackName>-<region>" must be at most 128 characters`,
    );
  }
  // The MRSC table's fixed name: each Region's stack finds its own replica by it, with no cross-Region value.
  const tableName = config.existingTableName ?? `${stackName}-plants`;
  const shared = PlantStoreSharedStack.isNeeded(config)
    ? new PlantStoreSharedStack(app, `${stackName}-shared`, {
        env: { region: firstRegion },
        description: "Plant Store, multi-Region: the strongly consistent table and the token issuer",
        terminationProtection: config.terminationProtection,
        config,
        multiRegion,
        tableName,
      })
    : undefined;
  // Every Region trusts the one issuer, as it would an issuer the user brings. Each Region's stack reads
  // the pool's key set at deploy time (infra/delivered-key-set.ts), so its function verifies tokens
  // through an outage of the pool's Region.
  const tokenIssuer = shared?.tokenIssuer?.trustedIssuer ?? config.tokenIssuer;

  return regions.map((region) => {
    const stack = new PlantStoreStack(app, regionalStackName(region), {
      env: { region },
      description: `Plant Store in ${region}: ${describeRoutes()} on API Gateway HTTP API, Lambda and DynamoDB MRSC`,
      terminationProtection: config.terminationProtection,
      config: { ...config, tokenIssuer, existingTableName: tableName, customDomain: undefined },
    });
    if (shared !== undefined) stack.addStackDependency(shared);
    if (domain !== undefined) new RegionRouting(stack, "RegionRouting", domain);
    return stack;
  });
}
