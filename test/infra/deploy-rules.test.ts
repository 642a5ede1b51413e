/**
 * The deploy-time rules (infra/rules/): each one, through the registered list, finds its fault in a
 * template where the protection was removed, and none finds anything in the stack as built; the stack in
 * every configuration docs/DEPLOY.md documents synthesizes with no finding of the rules, CloudFormation
 * Validate or cdk-nag; and `cdk synth` fails on a rule's finding, saying what to change.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { App, RemovalPolicy, Validations } from "aws-cdk-lib";
import { CfnTable } from "aws-cdk-lib/aws-dynamodb";
import { describe, expect, it } from "vitest";
import { stackNamePrefixPart } from "../../infra/cognito-token-issuer.ts";
import { ContextError, readPlantStoreConfig } from "../../infra/config.ts";
import { addPlantStore } from "../../infra/plant-store-app.ts";
import { PlantStoreStack } from "../../infra/plant-store-stack.ts";
import { domainPrefixProblem, withoutReservedWords } from "../../infra/rules/cognito-domain-prefix.ts";
import type { Template, TemplateResource } from "../../infra/rules/deploy-rule.ts";
import { DEPLOY_RULES } from "../../infra/rules/index.ts";
import { checkStack, DeployRulesPlugin } from "../../infra/rules/plugin.ts";
import { documentedConfigurations } from "../support/documented-configurations.ts";
import { synthesisError, synthesizedTemplate } from "../support/synthesize.ts";

/** A synth inside a test: seconds on a quiet machine, more beside other suites on two cores. */
const SYNTH_TIMEOUT_MS = 120_000;

const CERTIFICATE_ARN = "arn:aws:acm:eu-west-1:123456789012:certificate/0a1b2c3d-4e5f-6789-abcd-ef0123456789";

const defaults = synthesizedTemplate();
const everything = synthesizedTemplate({
  alarmEmail: "ops@example.com",
  corsAllowOrigins: "https://app.example.com",
  domainName: "plants.example.com",
  certificateArn: CERTIFICATE_ARN,
});

/** A deep copy of `template` changed by `change`, as a stack without one protection would synthesize. */
function without(
  template: Template,
  change: (
    resources: Record<string, TemplateResource & Record<string, unknown>>,
    copy: Template & Record<string, unknown>,
  ) => void,
): Template {
  const copy = structuredClone(template) as Template & Record<string, unknown>;
  change(copy.Resources as Record<string, TemplateResource & Record<string, unknown>>, copy);
  return copy;
}

function resourceNamed(
  resources: Record<string, unknown>,
  prefix: string,
): Record<string, unknown> & { Properties: Record<string, unknown> } {
  // The logical id: the construct path's words, then CDK's 8-digit hash (and a version's code hash).
  const matches = Object.entries(resources).filter(([id]) =>
    new RegExp(`^${prefix}[0-9A-F]{8}[0-9a-f]*$`).test(id),
  );
  if (matches.length !== 1 || matches[0] === undefined) throw new Error(`expected one resource ${prefix}*`);
  return matches[0][1] as Record<string, unknown> & { Properties: Record<string, unknown> };
}

/** The rules (by id) the registered list reports for `template`, with their descriptions. */
function findings(template: Template, region?: string): Record<string, string> {
  return Object.fromEntries(
    checkStack({ template, region }).map((violation) => [violation.ruleName, violation.description]),
  );
}

describe("the stack as built", () => {
  it("passes every rule, with every option that adds resources", () => {
    expect(findings(defaults)).toEqual({});
    expect(findings(everything)).toEqual({});
    expect(findings(everything, "eu-west-1")).toEqual({});
  });
});

describe("each rule finds its fault", () => {
  /** [rule id, what was removed, the template without it, the problem reported, the stack's known Region] */
  const cases: [string, string, Template, RegExp, string?][] = [
    [
      "PlantStore-AccessLogVendedName",
      "the access log group's name",
      without(defaults, (resources) => {
        delete resourceNamed(resources, "ApiAccessLogGroup").Properties.LogGroupName;
      }),
      /access log group of stage .* is unnamed .*, not under \/aws\/vendedlogs\/.*Policy document length/,
    ],
    [
      "PlantStore-AlarmTopicAllowsCloudWatch",
      "the topic policy's Allow for CloudWatch",
      without(everything, (resources) => {
        const policy = resourceNamed(resources, "AlarmsAlarmTopicPolicy").Properties.PolicyDocument as {
          Statement: { Effect: string }[];
        };
        policy.Statement = policy.Statement.filter((statement) => statement.Effect === "Deny");
      }),
      /does not allow cloudwatch\.amazonaws\.com to sns:Publish/,
    ],
    [
      "PlantStore-TableRetained",
      "Retain (RetainExceptOnCreate instead)",
      without(defaults, (resources) => {
        resourceNamed(resources, "PlantsTable").DeletionPolicy = "RetainExceptOnCreate";
      }),
      /DeletionPolicy is RetainExceptOnCreate\. .*first create that fails ends ROLLBACK_FAILED/,
    ],
    [
      "PlantStore-TableRetained",
      "Retain on replacement",
      without(defaults, (resources) => {
        delete resourceNamed(resources, "PlantsTable").UpdateReplacePolicy;
      }),
      /UpdateReplacePolicy is Delete/,
    ],
    [
      "PlantStore-TableRetained",
      "a generated table name",
      without(defaults, (resources) => {
        resourceNamed(resources, "PlantsTable").Properties.TableName = "plants";
      }),
      /the table has a fixed TableName/,
    ],
    [
      "PlantStore-TableRetained",
      "deletion protection",
      without(defaults, (resources) => {
        resourceNamed(resources, "PlantsTable").Properties.DeletionProtectionEnabled = false;
      }),
      /deletion protection is off/,
    ],
    [
      "PlantStore-CorsExposesHeaders",
      "ExposeHeaders",
      without(everything, (resources) => {
        delete (resourceNamed(resources, "Api").Properties.CorsConfiguration as Record<string, unknown>)
          .ExposeHeaders;
      }),
      /does not expose retry-after, www-authenticate, apigw-requestid/,
    ],
    [
      "PlantStore-CognitoDomainPrefix",
      "a prefix without reserved words",
      without(defaults, (resources) => {
        resourceNamed(resources, "TokenIssuerUserPoolDomain").Properties.Domain = "my-cognito-aws";
      }),
      /"my-cognito-aws" must not contain the reserved word "aws"/,
    ],
    [
      "PlantStore-CognitoDomainPrefix",
      "a derived prefix without reserved words",
      without(defaults, (resources) => {
        const domain = resourceNamed(resources, "TokenIssuerUserPoolDomain").Properties.Domain as {
          "Fn::Join": [string, unknown[]];
        };
        domain["Fn::Join"][1][0] = "amazon";
      }),
      /"amazon-<deploy-time>" must not contain the reserved word "amazon"/,
    ],
    [
      "PlantStore-CognitoDomainPrefix",
      "a derived prefix short enough",
      without(defaults, (resources) => {
        const domain = resourceNamed(resources, "TokenIssuerUserPoolDomain").Properties.Domain as {
          "Fn::Join": [string, unknown[]];
        };
        domain["Fn::Join"][1][0] = "p".repeat(60);
      }),
      /must be 1 to 63 characters, got 69/,
    ],
    [
      "PlantStore-CertificateRegion",
      "the Rule asserting the Region",
      without(everything, (_resources, copy) => {
        (copy as Record<string, unknown>).Rules = Object.fromEntries(
          Object.entries(copy.Rules ?? {}).filter(([id]) => !id.startsWith("CustomDomain")),
        );
      }),
      /no CloudFormation Rule asserts that the stack's Region is eu-west-1/,
    ],
    [
      "PlantStore-CertificateRegion",
      "a certificate in the known Region",
      everything,
      /the certificate is in eu-west-1, the stack deploys to us-east-1/,
      "us-east-1",
    ],
    [
      "PlantStore-NameLengths",
      "a short alarm name",
      without(defaults, (resources) => {
        resourceNamed(resources, "AlarmsFaults").Properties.AlarmName = "a".repeat(256);
      }),
      /AlarmName may be 256 characters long, over AWS::CloudWatch::Alarm's 255/,
    ],
    [
      "PlantStore-RollbackAlarmsPerVersion",
      "rollback alarms on the new version only (Api5xx added)",
      without(defaults, (resources) => {
        const group = resourceNamed(resources, "RolloutDeploymentGroup").Properties.AlarmConfiguration as {
          Alarms: { Name: unknown }[];
        };
        group.Alarms.push({
          Name: { Ref: Object.keys(resources).find((id) => id.startsWith("AlarmsApi5xx")) },
        });
      }),
      /rollback alarm AlarmsApi5xx\w+ watches a metric that is not the published version's own/,
    ],
    [
      "PlantStore-RollbackAlarmsPerVersion",
      "a rollback alarm named per version",
      without(defaults, (resources) => {
        resourceNamed(resources, "AlarmsNewVersionFaults").Properties.AlarmName =
          "PlantStore-NewVersionFaults";
      }),
      /keeps its name \(and state\) from one version to the next/,
    ],
    [
      "PlantStore-VersionsRetained",
      "the version's Retain",
      without(defaults, (resources) => {
        delete resourceNamed(resources, "HandlerCurrentVersion").DeletionPolicy;
      }),
      /is deleted when a deploy replaces it/,
    ],
  ];

  it("covers every registered rule", () => {
    expect(new Set(cases.map(([id]) => id))).toEqual(new Set(DEPLOY_RULES.map((rule) => rule.id)));
  });

  it.each(cases)("%s: without %s", (id, _removed, template, problem, region) => {
    const reported = findings(template, region);
    expect(Object.keys(reported)).toEqual([id]);
    expect(reported[id]).toMatch(problem);
  });

  it("names for each rule the AWS behaviour, its documentation and what to change", () => {
    for (const rule of DEPLOY_RULES) {
      expect(rule.id).toMatch(/^PlantStore-[A-Za-z]+$/);
      expect(rule.behaviour.length, rule.id).toBeGreaterThan(80);
      expect(rule.documentation, rule.id).toMatch(/Guide|Reference|quotas/);
      expect(rule.fix.length, rule.id).toBeGreaterThan(20);
    }
  });
});

describe("cdk synth", () => {
  it(
    "fails on a rule's finding, naming the rule and what to change",
    () => {
      const outdir = mkdtempSync(join(tmpdir(), "plant-store-synth-"));
      try {
        const app = new App({ outdir, context: { "aws:cdk:bundling-stacks": [] } });
        const stack = addPlantStore(app);
        const table = stack.node.findAll().find((child) => child instanceof CfnTable);
        table?.applyRemovalPolicy(RemovalPolicy.RETAIN_ON_UPDATE_OR_DELETE);
        expect(() => app.synth()).toThrow(
          /ERROR DeletionPolicy is RetainExceptOnCreate\. [\s\S]*PlantStore\/PlantsTable[\s\S]*Suggested fix: give the table removalPolicy: RemovalPolicy\.RETAIN [\s\S]*PlantStore-TableRetained/,
        );
      } finally {
        rmSync(outdir, { recursive: true, force: true });
      }
    },
    SYNTH_TIMEOUT_MS,
  );

  it(
    "refuses a custom domain whose certificate is in another Region than the stack's, when the Region is known",
    () => {
      const outdir = mkdtempSync(join(tmpdir(), "plant-store-synth-"));
      try {
        const app = new App({ outdir, context: { "aws:cdk:bundling-stacks": [] } });
        const config = readPlantStoreConfig(
          (key) => ({ domainName: "plants.example.com", certificateArn: CERTIFICATE_ARN })[key],
        );
        new PlantStoreStack(app, "PlantStore", {
          env: { region: "us-east-1", account: "123456789012" },
          config,
        });
        Validations.of(app).addPlugins(new DeployRulesPlugin());
        expect(() => app.synth()).toThrow(
          /ERROR the certificate is in eu-west-1, the stack deploys to us-east-1\.[\s\S]*PlantStore-CertificateRegion/,
        );
      } finally {
        rmSync(outdir, { recursive: true, force: true });
      }
    },
    SYNTH_TIMEOUT_MS,
  );
});

describe("Cognito domain prefixes", () => {
  it.each([
    ["my-cognito-aws", /must not contain the reserved word "aws", got "my-cognito-aws"/],
    ["plants-amazon", /reserved word "amazon"/],
    ["-plants", /lowercase letters, digits and hyphens/],
    ["p".repeat(64), /1 to 63 characters/],
  ])("refuses -c cognitoDomainPrefix=%s at synth", (prefix, message) => {
    const error = synthesisError({ cognitoDomainPrefix: prefix });
    expect(error).toBeInstanceOf(ContextError);
    expect(error.message).toMatch(message);
  });

  it("derives from any stack name a prefix Cognito accepts, removing reserved words until none is left", () => {
    expect(withoutReservedWords("amazawson")).toBe("");
    expect(stackNamePrefixPart("Amazawson")).toBe("");
    expect(stackNamePrefixPart("PlantStore-AWS-dev")).toBe("plantstore-dev");
    expect(stackNamePrefixPart("cogAWSnito-amazAmazononplants")).toBe("plants");
    for (const stackName of ["Amazawson", "A-cognito-", "x".repeat(128), "Coamazongnitos-aws-1"]) {
      const part = stackNamePrefixPart(stackName);
      expect(domainPrefixProblem(`${part || "plant-store"}-0a1b2c3d`), stackName).toBeUndefined();
    }
  });
});

/** Each documented configuration with its synthesized template, or the error its synthesis threw. */
const documented = documentedConfigurations().map((context) => {
  try {
    return { context, template: synthesizedTemplate(context), error: undefined };
  } catch (error) {
    return { context, template: undefined, error: String(error) };
  }
});

describe("every configuration docs/DEPLOY.md documents", () => {
  it("is found in the guide", () => {
    expect(documented.length).toBeGreaterThan(10);
  });

  it.each(documented)(
    "$context synthesizes with no finding of the rules, CloudFormation Validate or cdk-nag",
    ({ template, error }) => {
      // Synthesis runs all three and throws on any finding.
      expect(error).toBeUndefined();
      expect(findings(template ?? {})).toEqual({});
    },
  );
});
