import { readFileSync } from "node:fs";
import type {
  IPolicyValidationContext,
  IPolicyValidationPlugin,
  PolicyValidationPluginReport,
  PolicyViolation,
} from "aws-cdk-lib";
import type { DeployRule, SynthesizedStack, Template } from "./deploy-rule.ts";
import { DEPLOY_RULES } from "./index.ts";

/**
 * Runs the deploy-time rules over every synthesized stack, as cdk-nag runs its checks: a violation fails
 * `cdk synth` and `cdk deploy` before anything is created, with a report naming the rule, the AWS
 * behaviour it guards, where AWS documents it, the resource and what to change.
 */
export class DeployRulesPlugin implements IPolicyValidationPlugin {
  readonly name = "Plant Store deploy-time rules";
  readonly ruleIds: string[];

  constructor(private readonly rules: readonly DeployRule[] = DEPLOY_RULES) {
    this.ruleIds = rules.map((rule) => rule.id);
  }

  validate(context: IPolicyValidationContext): PolicyValidationPluginReport {
    const violations = context.stackTemplates.flatMap(({ templatePath, region }) =>
      checkStack(
        { template: JSON.parse(readFileSync(templatePath, "utf8")) as Template, region },
        this.rules,
        templatePath,
      ),
    );
    return { success: violations.length === 0, violations };
  }
}

/** The violations of `rules` in one synthesized stack, one per rule that fails, listing its resources. */
export function checkStack(
  stack: SynthesizedStack,
  rules: readonly DeployRule[] = DEPLOY_RULES,
  templatePath?: string,
): PolicyViolation[] {
  return rules.flatMap((rule) => {
    const findings = rule.check(stack);
    if (findings.length === 0) return [];
    return [
      {
        ruleName: rule.id,
        description: `${findings.map((finding) => finding.problem).join("; ")}. ${rule.behaviour} (${rule.documentation})`,
        fix: rule.fix,
        severity: "error",
        violatingResources: findings.map((finding) => ({
          resourceLogicalId: finding.logicalId,
          locations: [`Resources/${finding.logicalId}`],
          ...(templatePath === undefined ? {} : { templatePath }),
        })),
      },
    ];
  });
}
