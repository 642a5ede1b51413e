import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { App } from "aws-cdk-lib";
import { Template } from "aws-cdk-lib/assertions";
import { AwsSolutionsChecks } from "cdk-nag";
import { afterAll } from "vitest";
import { deliverableKeySet } from "../../infra/key-set-delivery/public-key-set.ts";
import { addPlantStore } from "../../infra/plant-store-app.ts";
import type { Template as DeployTemplate } from "../../infra/rules/deploy-rule.ts";

const cdkJson = JSON.parse(readFileSync(new URL("../../cdk.json", import.meta.url), "utf8")) as {
  context: Record<string, unknown>;
};

export interface SynthesizedPlantStore {
  readonly template: Template;
  /** Unacknowledged cdk-nag AwsSolutions findings (errors and warnings). */
  readonly nagFindings: { ruleName: string; severity: string; paths: (string | undefined)[] }[];
  /** The directory the handler was bundled into; removed after the file's tests. */
  readonly handlerAssetDirectory: string;
}

/**
 * Synthesizes the app the way `cdk synth` does (cdk.json's feature flags plus `context`), bundling the real
 * handler, into a temporary directory that is removed after the calling file's tests (call it at the top
 * level of a test file or of a describe block). Synthesis itself throws on any unacknowledged cdk-nag finding
 * and on any finding of the deploy-time rules (infra/rules/).
 */
export function synthesizePlantStore(context: Record<string, string> = {}): SynthesizedPlantStore {
  const outdir = mkdtempSync(join(tmpdir(), "plant-store-synth-"));
  const removeOutdir = () => rmSync(outdir, { recursive: true, force: true });
  try {
    const synthesized = synthesizeInto(outdir, context);
    afterAll(removeOutdir);
    return synthesized;
  } catch (error) {
    removeOutdir();
    throw error;
  }
}

function synthesizeInto(outdir: string, context: Record<string, string>): SynthesizedPlantStore {
  const app = new App({ outdir, context: { ...cdkJson.context, ...context } });
  const stack = addPlantStore(app);
  const assembly = app.synth();
  const nagFindings = new AwsSolutionsChecks().validateScope(app).violations.map((violation) => ({
    ruleName: violation.ruleName,
    severity: violation.severity ?? "unknown",
    paths: violation.violatingResources.map((resource) => resource.constructPath),
  }));
  const template = Template.fromStack(stack);
  // The handler's code is `<asset hash>.zip`; its bundle is in the assembly's `asset.<asset hash>`.
  const { S3Key } = handlerResource(template).Code as { S3Key: string };
  const handlerAsset = `asset.${S3Key.replace(/\.zip$/, "")}`;
  if (!readdirSync(assembly.directory).includes(handlerAsset)) {
    throw new Error(`The handler's bundle ${handlerAsset} is not in the cloud assembly`);
  }
  return { template, nagFindings, handlerAssetDirectory: join(assembly.directory, handlerAsset) };
}

/**
 * The template of the app synthesized with `context`, without bundling the handler (fast): what the
 * deploy-time rules, CloudFormation Validate and cdk-nag read. Synthesis throws on any finding of them.
 */
export function synthesizedTemplate(context: Record<string, string> = {}): DeployTemplate {
  const outdir = mkdtempSync(join(tmpdir(), "plant-store-synth-"));
  try {
    const app = new App({
      outdir,
      context: { ...cdkJson.context, ...context, [BUNDLING_STACKS]: [] },
    });
    const stack = addPlantStore(app);
    return app.synth().getStackByName(stack.stackName).template as DeployTemplate;
  } finally {
    rmSync(outdir, { recursive: true, force: true });
  }
}

/**
 * Every stack's template of the app synthesized with `context`, without bundling: the Plant Store stack and,
 * with edge protection, its us-east-1 companion. Synthesis throws on any finding, as synthesizedTemplate.
 */
export function synthesizedTemplates(
  context: Record<string, string> = {},
): { stackName: string; template: DeployTemplate }[] {
  const outdir = mkdtempSync(join(tmpdir(), "plant-store-synth-"));
  try {
    const app = new App({
      outdir,
      context: { ...cdkJson.context, ...context, [BUNDLING_STACKS]: [] },
    });
    addPlantStore(app);
    return app
      .synth()
      .stacks.map(({ stackName, template }) => ({ stackName, template: template as DeployTemplate }));
  } finally {
    rmSync(outdir, { recursive: true, force: true });
  }
}

/** The context key naming the stacks to bundle assets for; none skips esbuild. */
const BUNDLING_STACKS = "aws:cdk:bundling-stacks";

/** The error that building the app with `context` throws (a context check fails before any bundling). */
export function synthesisError(context: Record<string, string>): Error {
  const outdir = mkdtempSync(join(tmpdir(), "plant-store-synth-"));
  try {
    addPlantStore(new App({ outdir, context: { ...cdkJson.context, ...context } }));
  } catch (error) {
    if (error instanceof Error) return error;
    throw error;
  } finally {
    rmSync(outdir, { recursive: true, force: true });
  }
  throw new Error(`The app was built with ${JSON.stringify(context)}, which should have been refused`);
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

/** The logical id of the one resource of `type`. */
export function onlyLogicalId(template: Template, type: string): string {
  const ids = Object.keys(template.findResources(type));
  if (ids.length !== 1 || ids[0] === undefined) throw new Error(`Expected one ${type}, found ${ids.length}`);
  return ids[0];
}

/** The policy attached to the role with logical id `roleId`; fails when there is none or several. */
export function policyOfRole(template: Template, roleId: string): Record<string, unknown> {
  const policies = Object.values(template.findResources("AWS::IAM::Policy") as Resources).filter(
    ({ Properties }) => JSON.stringify(Properties.Roles) === JSON.stringify([{ Ref: roleId }]),
  );
  if (policies.length !== 1 || policies[0] === undefined) {
    throw new Error(`Expected one policy of ${roleId}, found ${policies.length}`);
  }
  return policies[0].Properties;
}

/**
 * A URL under the stack's Region's Cognito issuer host, as the template joins it:
 * `https://cognito-idp.<Region>.<URL suffix>` followed by `tail` (the pool's id and what comes after it).
 */
export function cognitoIdpUrlOf(...tail: unknown[]): { "Fn::Join": [string, unknown[]] } {
  return {
    "Fn::Join": [
      "",
      ["https://cognito-idp.", { Ref: "AWS::Region" }, ".", { Ref: "AWS::URLSuffix" }, ...tail],
    ],
  };
}

/** A key-set file as an issuer publishes it (two RSA keys, as Cognito's): `-c jwks=` in docs/DEPLOY.md. */
export const ISSUER_KEY_SET_FILE = "support/fixtures/issuer-jwks.json";

/** The logical id of the handler function (the stack's other functions serve deploy-time resources). */
export function handlerLogicalId(template: Template): string {
  const ids = Object.keys(template.findResources("AWS::Lambda::Function")).filter((id) =>
    /^Handler[0-9A-F]{8}$/.test(id),
  );
  if (ids.length !== 1 || ids[0] === undefined) throw new Error(`Expected one handler, found ${ids.length}`);
  return ids[0];
}

/** The handler function's properties. */
export function handlerResource(template: Template): Record<string, unknown> {
  const resources = template.findResources("AWS::Lambda::Function") as Resources;
  return (resources[handlerLogicalId(template)] as { Properties: Record<string, unknown> }).Properties;
}

/** What a reference in the handler's environment resolves to at deploy, when not an https URL. */
const RESOLVED_AT_DEPLOY: Record<string, string> = {
  TABLE_NAME: "PlantStore-PlantsTable1A2B3C4D-0A1B2C3D4E5F",
  // What the deploy-time read delivers from a Cognito pool.
  JWKS_JSON: deliverableKeySet(
    JSON.parse(readFileSync(new URL(`../../${ISSUER_KEY_SET_FILE}`, import.meta.url), "utf8")),
  ),
};

/**
 * The environment the deployed handler starts with: the template's variables, each CloudFormation
 * reference standing for a value of the shape it resolves to (the table's generated name, else an https
 * URL), plus what the Lambda runtime sets.
 */
export function deployedHandlerEnvironment(template: Template): Record<string, string> {
  const { Variables } = handlerResource(template).Environment as {
    Variables: Record<string, unknown>;
  };
  const fromTemplate = Object.fromEntries(
    Object.entries(Variables).map(([name, value]) => [
      name,
      typeof value === "string" ? value : (RESOLVED_AT_DEPLOY[name] ?? "https://resolved-at-deploy.example"),
    ]),
  );
  return {
    ...fromTemplate,
    AWS_LAMBDA_FUNCTION_NAME: "PlantStore-Handler",
    AWS_REGION: "eu-west-1",
    AWS_ACCESS_KEY_ID: "AKIDEXAMPLE",
    AWS_SECRET_ACCESS_KEY: "secret",
    AWS_SESSION_TOKEN: "session",
  };
}

/** One stack of a synthesized app: its name, Region (when it names one), template and the stacks it depends on. */
export interface SynthesizedAppStack {
  readonly name: string;
  readonly region: string | undefined;
  readonly template: DeployTemplate;
  readonly dependencies: string[];
}

/**
 * Every stack of the app synthesized with `context` (the multi-Region app has several), without bundling
 * the handler, and cdk-nag's unacknowledged findings over the whole app. Synthesis throws on any finding
 * of the deploy-time rules, CloudFormation Validate or cdk-nag in any stack.
 */
export function synthesizedApp(context: Record<string, string>): {
  stacks: SynthesizedAppStack[];
  nagFindings: string[];
} {
  const outdir = mkdtempSync(join(tmpdir(), "plant-store-synth-"));
  try {
    const app = new App({ outdir, context: { ...cdkJson.context, ...context, [BUNDLING_STACKS]: [] } });
    addPlantStore(app);
    const assembly = app.synth();
    const nagFindings = new AwsSolutionsChecks()
      .validateScope(app)
      .violations.map(
        (violation) =>
          `${violation.ruleName} ${violation.violatingResources.map((r) => r.constructPath).join(",")}`,
      );
    const stacks = assembly.stacks.map((stack) => ({
      name: stack.stackName,
      region: stack.environment.region === "unknown-region" ? undefined : stack.environment.region,
      template: stack.template as DeployTemplate,
      dependencies: stack.dependencies.map((dependency) => dependency.id),
    }));
    return { stacks, nagFindings };
  } finally {
    rmSync(outdir, { recursive: true, force: true });
  }
}
