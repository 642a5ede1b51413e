/**
 * The stack-wide options of docs/DEPLOY.md: termination protection, tags, and a recreated stack that
 * re-attaches the user pool a destroyed one retained (the same issuer, client id and token endpoint).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { App } from "aws-cdk-lib";
import { describe, expect, it } from "vitest";
import { STACK_TAG } from "../../infra/config.ts";
import { addPlantStore } from "../../infra/plant-store-app.ts";
import type { Template, TemplateResource } from "../../infra/rules/deploy-rule.ts";
import { OUTPUT_KEYS } from "../../infra/stack-outputs.ts";
import { cognitoIdpUrlOf } from "../support/synthesize.ts";

/** The stack's template and manifest entry, synthesized without bundling (fast). */
function synthesize(context: Record<string, string>): {
  template: Template & { Outputs?: Record<string, { Value: unknown }> };
  terminationProtection: boolean | undefined;
  stackTags: Record<string, string>;
} {
  const outdir = mkdtempSync(join(tmpdir(), "plant-store-synth-"));
  try {
    const app = new App({ outdir, context: { ...context, "aws:cdk:bundling-stacks": [] } });
    const stack = addPlantStore(app);
    const artifact = app.synth().getStackByName(stack.stackName);
    return {
      template: artifact.template,
      terminationProtection: artifact.terminationProtection,
      stackTags: artifact.tags,
    };
  } finally {
    rmSync(outdir, { recursive: true, force: true });
  }
}

const defaults = synthesize({});

describe("termination protection", () => {
  it("is off by default, so that development stacks can be destroyed", () => {
    expect(defaults.terminationProtection).toBeFalsy();
  });

  it("is on with -c terminationProtection=true", () => {
    expect(synthesize({ terminationProtection: "true" }).terminationProtection).toBe(true);
  });
});

describe("tags", () => {
  const tagged = synthesize({ stackName: "PlantStore-prod", tags: "team=plants,cost-center=42" });
  const tagsOf = (template: Template, prefix: string) => {
    const entry = Object.entries(template.Resources ?? {}).find(([id]) => id.startsWith(prefix));
    return Object.fromEntries(
      ((entry?.[1].Properties?.Tags ?? []) as { Key: string; Value: string }[]).map(({ Key, Value }) => [
        Key,
        Value,
      ]),
    );
  };

  it("name the stack on the stack and on what outlives it (the table)", () => {
    expect(defaults.stackTags).toEqual({ [STACK_TAG]: "PlantStore" });
    expect(tagsOf(defaults.template, "PlantsTable")).toEqual({ [STACK_TAG]: "PlantStore" });
  });

  it("add the operator's own with -c tags=key=value,…", () => {
    const expected = { [STACK_TAG]: "PlantStore-prod", team: "plants", "cost-center": "42" };
    expect(tagged.stackTags).toEqual(expected);
    expect(tagsOf(tagged.template, "PlantsTable")).toEqual(expected);
    expect(tagsOf(tagged.template, "Handler")).toEqual(expected);
  });
});

describe("a recreated stack on the retained user pool", () => {
  const { template } = synthesize({
    userPoolId: "eu-west-1_AbC123dEf",
    userPoolClientId: "1example23456789abcdefghij",
    cognitoDomainPrefix: "plantstore-0a1b2c3d",
  });
  const resourcesOfType = (type: string) =>
    Object.values(template.Resources ?? {}).filter((resource) => resource.Type === type);

  it("creates nothing of Cognito", () => {
    for (const type of ["UserPool", "UserPoolClient", "UserPoolDomain", "UserPoolResourceServer"]) {
      expect(resourcesOfType(`AWS::Cognito::${type}`)).toEqual([]);
    }
  });

  it("trusts the retained pool's issuer and client, and names its token endpoint", () => {
    const issuer = cognitoIdpUrlOf("/eu-west-1_AbC123dEf");
    const variablesOf = (resource: TemplateResource) =>
      ((resource.Properties?.Environment ?? {}) as { Variables?: Record<string, unknown> }).Variables ?? {};
    const handler = resourcesOfType("AWS::Lambda::Function").find(
      (resource) => "JWT_ISSUER" in variablesOf(resource),
    );
    expect(handler && variablesOf(handler)).toMatchObject({
      JWT_ISSUER: issuer,
      JWT_CLIENT_IDS: "1example23456789abcdefghij",
    });
    expect(template.Outputs?.[OUTPUT_KEYS.userPoolId]?.Value).toBe("eu-west-1_AbC123dEf");
    expect(template.Outputs?.[OUTPUT_KEYS.clientId]?.Value).toBe("1example23456789abcdefghij");
    expect(template.Outputs?.[OUTPUT_KEYS.jwtIssuer]?.Value).toEqual(issuer);
    expect(template.Outputs?.[OUTPUT_KEYS.tokenEndpoint]?.Value).toEqual({
      "Fn::Join": [
        "",
        ["https://plantstore-0a1b2c3d.auth.", { Ref: "AWS::Region" }, ".amazoncognito.com/oauth2/token"],
      ],
    });
  });
});
