import { type App, Validations } from "aws-cdk-lib";
import { AwsSolutionsChecks } from "cdk-nag";
import {
  readMultiRegionConfig,
  readPlantStoreConfig,
  readStackName,
  refuseUnknownContextKeys,
} from "./config.ts";
import { addMultiRegionPlantStore } from "./multi-region/multi-region-app.ts";
import { PlantStoreStack } from "./plant-store-stack.ts";
import { DeployRulesPlugin } from "./rules/plugin.ts";

/**
 * Adds the Plant Store stack, configured from the app's context, and the cdk-nag checks to `app`. With
 * `-c regions=…` it adds the multi-Region stacks instead and returns the first Region's.
 */
export function addPlantStore(app: App): PlantStoreStack {
  refuseUnknownContextKeys(Object.keys(app.node.getAllContext()));
  const readContext = (key: string): unknown => app.node.tryGetContext(key);
  const stackName = readStackName(readContext);
  const config = readPlantStoreConfig(readContext);
  const multiRegion = readMultiRegionConfig(readContext);
  const stack =
    multiRegion === undefined
      ? // No `env`: the stack is environment-agnostic, so synth needs no credentials and no lookups.
        new PlantStoreStack(app, stackName, {
          description: "Plant Store: POST /plants on API Gateway HTTP API, Lambda and DynamoDB",
          config,
        })
      : addMultiRegionPlantStore(app, stackName, config, multiRegion)[0];
  if (stack === undefined) throw new Error("no Region to serve");
  // Any unacknowledged AwsSolutions finding, and any deploy-time rule broken (infra/rules/), fails
  // synthesis, so `cdk synth` and `cdk deploy` refuse it before anything is created.
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app), new DeployRulesPlugin());
  return stack;
}
