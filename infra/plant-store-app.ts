import { type App, Validations } from "aws-cdk-lib";
import { AwsSolutionsChecks } from "cdk-nag";
import { readPlantStoreConfig, readStackName, refuseUnknownContextKeys } from "./config.ts";
import { PlantStoreStack } from "./plant-store-stack.ts";
import { DeployRulesPlugin } from "./rules/plugin.ts";

/** Adds the Plant Store stack, configured from the app's context, and the cdk-nag checks to `app`. */
export function addPlantStore(app: App): PlantStoreStack {
  refuseUnknownContextKeys(Object.keys(app.node.getAllContext()));
  const readContext = (key: string): unknown => app.node.tryGetContext(key);
  // No `env`: the stack is environment-agnostic, so synth needs no credentials and no lookups.
  const stack = new PlantStoreStack(app, readStackName(readContext), {
    description: "Plant Store: POST /plants on API Gateway HTTP API, Lambda and DynamoDB",
    config: readPlantStoreConfig(readContext),
  });
  // Any unacknowledged AwsSolutions finding, and any deploy-time rule broken (infra/rules/), fails
  // synthesis, so `cdk synth` and `cdk deploy` refuse it before anything is created.
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app), new DeployRulesPlugin());
  return stack;
}
