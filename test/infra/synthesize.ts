import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { App } from "aws-cdk-lib";
import { Template } from "aws-cdk-lib/assertions";
import { AwsSolutionsChecks } from "cdk-nag";
import { addPlantStore } from "../../infra/plant-store-app.ts";

const cdkJson = JSON.parse(readFileSync(new URL("../../cdk.json", import.meta.url), "utf8")) as {
  context: Record<string, unknown>;
};

export interface SynthesizedPlantStore {
  readonly template: Template;
  /** Unacknowledged cdk-nag AwsSolutions findings (errors and warnings). */
  readonly nagFindings: { ruleName: string; severity: string; paths: (string | undefined)[] }[];
  /** The directory the handler was bundled into. */
  readonly handlerAssetDirectory: string;
}

/**
 * Synthesizes the app the way `cdk synth` does (cdk.json's feature flags plus `context`), bundling the real
 * handler. Synthesis itself throws on any unacknowledged cdk-nag finding.
 */
export function synthesizePlantStore(context: Record<string, string> = {}): SynthesizedPlantStore {
  const app = new App({ context: { ...cdkJson.context, ...context } });
  const stack = addPlantStore(app);
  const assembly = app.synth();
  const nagFindings = new AwsSolutionsChecks().validateScope(app).violations.map((violation) => ({
    ruleName: violation.ruleName,
    severity: violation.severity ?? "unknown",
    paths: violation.violatingResources.map((resource) => resource.constructPath),
  }));
  const template = Template.fromStack(stack);
  const assetDirectories = readdirSync(assembly.directory).filter((name) => name.startsWith("asset."));
  if (assetDirectories.length !== 1 || assetDirectories[0] === undefined) {
    throw new Error(`Expected one asset (the handler bundle), found ${assetDirectories.join(", ")}`);
  }
  return { template, nagFindings, handlerAssetDirectory: join(assembly.directory, assetDirectories[0]) };
}

type Resources = Record<string, { Properties: Record<string, unknown> }>;

/** The one resource of `type`; fails when there are none or several. */
export function onlyResource(template: Template, type: string): Record<string, unknown> {
  const resources = Object.values(template.findResources(type) as Resources);
  if (resources.length !== 1 || resources[0] === undefined) {
    throw new Error(`Expected one ${type}, found ${resources.length}`);
  }
  return resources[0].Properties;
}
