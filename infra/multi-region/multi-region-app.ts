import type { App } from "aws-cdk-lib";
import { describeRoutes } from "../../lambda/http/routes.ts";
import { ContextError, type MultiRegionConfig, type PlantStoreConfig } from "../config.ts";
import { PlantStoreStack } from "../plant-store-stack.ts";
import { RegionRouting } from "./region-routing.ts";
import { PlantStoreSharedStack } from "./shared-stack.ts";

/** `<stack name>-<region>`: each Region's stack. */
export function regionalStackName(stackName: string, region: string): string {
  return `${stackName}-${region}`;
}

/** `<stack name>-shared`: the table and the user pool, in the first Region. */
export function sharedStackName(stackName: string): string {
  return `${stackName}-shared`;
}

/** The MRSC table's fixed name: each Region's stack finds its own replica by it, with no cross-Region value. */
export function globalTableName(stackName: string): string {
  return `${stackName}-plants`;
}

/**
 * The multi-Region Plant Store (docs/DEPLOY.md, "Multi-Region"): the shared stack in the first Region, and
 * a PlantStoreStack per Region serving from that Region's replica and trusting the one issuer. Each
 * Region's stack depends on the shared one, so `cdk deploy --all` deploys that first. Returns the
 * Regions' stacks, in the order given.
 */
export function addMultiRegionPlantStore(
  app: App,
  stackName: string,
  config: PlantStoreConfig,
  multiRegion: MultiRegionConfig,
): PlantStoreStack[] {
  const { regions, domain } = multiRegion;
  const [firstRegion] = regions;
  const longest = Math.max(...regions.map((region) => regionalStackName(stackName, region).length));
  if (longest > 128) {
    throw new ContextError(
      `Context "stackName" is too long for multi-Region: "<stackName>-<region>" must be at most 128 characters`,
    );
  }
  const tableName = config.existingTableName ?? globalTableName(stackName);
  const shared = PlantStoreSharedStack.isNeeded(config)
    ? new PlantStoreSharedStack(app, sharedStackName(stackName), {
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
    const stack = new PlantStoreStack(app, regionalStackName(stackName, region), {
      env: { region },
      description: `Plant Store in ${region}: ${describeRoutes()} on API Gateway HTTP API, Lambda and DynamoDB MRSC`,
      terminationProtection: config.terminationProtection,
      config: { ...config, tokenIssuer, existingTableName: tableName, customDomain: undefined },
    });
    if (shared !== undefined) stack.addStackDependency(shared);
    if (domain !== undefined) {
      new RegionRouting(stack, "RegionRouting", {
        domain,
        api: stack.api,
        stage: stack.stage,
        accessLogGroup: stack.accessLogGroup,
      });
    }
    return stack;
  });
}
