import { type App, Tags, Validations } from "aws-cdk-lib";
import { AwsSolutionsChecks } from "cdk-nag";
import { readPlantStoreConfig, readStackName, refuseUnknownContextKeys } from "./config.ts";
import { PlantStoreStack } from "./plant-store-stack.ts";
import { DeployRulesPlugin } from "./rules/plugin.ts";

/** The tag every resource of a stack carries, its value the stack's name. */
export const STACK_TAG = "plant-store:stack";

/** Adds the Plant Store stack, configured from the app's context, and the cdk-nag checks to `app`. */
export function addPlantStore(app: App): PlantStoreStack {
  refuseUnknownContextKeys(Object.keys(app.node.getAllContext()));
  const readContext = (key: string): unknown => app.node.tryGetContext(key);
  const stackName = readStackName(readContext);
  const config = readPlantStoreConfig(readContext);
  // No `env`: the stack is environment-agnostic, so synth needs no credentials and no lookups.
  const stack = new PlantStoreStack(app, stackName, {
    description: "Plant Store: POST /plants on API Gateway HTTP API, Lambda and DynamoDB",
    config,
    terminationProtection: config.terminationProtection,
  });
  // On the stack and every resource that takes tags. The stack's own tag stays on what outlives it (the
  // retained table and user pool), so they can be found by it after a destroy.
  // Dashboards are left out: their Tags property is newer than the CloudFormation schema cfn-lint 1.51.0
  // checks against (E3002), and a dashboard goes with the stack.
  for (const [key, value] of Object.entries({ [STACK_TAG]: stackName, ...config.tags })) {
    Tags.of(stack).add(key, value, { excludeResourceTypes: ["AWS::CloudWatch::Dashboard"] });
  }
  // Any unacknowledged AwsSolutions finding, and any deploy-time rule broken (infra/rules/), fails
  // synthesis, so `cdk synth` and `cdk deploy` refuse it before anything is created.
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app), new DeployRulesPlugin());
  return stack;
}
