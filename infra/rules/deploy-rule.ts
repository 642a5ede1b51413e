/**
 * A deploy-time rule: something CloudFormation, the service or the account enforces (or silently gets
 * wrong) only while deploying or after, which synth, CloudFormation Validate and cdk-nag do not see. Each
 * rule checks the synthesized template of a stack and names what to change; the rules are registered in
 * `DEPLOY_RULES` (./index.ts) and run at synth by DeployRulesPlugin (./plugin.ts).
 */
export interface DeployRule {
  /** Stable id, printed in the synth report: `PlantStore-<Name>`. */
  readonly id: string;
  /** The AWS behaviour the rule guards, as it bites a deployer. */
  readonly behaviour: string;
  /** Where AWS documents that behaviour: guide and page. */
  readonly documentation: string;
  /** What to change when the rule fails. */
  readonly fix: string;
  check(stack: SynthesizedStack): RuleFinding[];
}

/** One violation: the resource (logical id) and what is wrong with it. */
export interface RuleFinding {
  readonly logicalId: string;
  readonly problem: string;
}

/** A stack's template as `cdk synth` writes it, with the environment when the stack names one. */
export interface SynthesizedStack {
  readonly template: Template;
  /** The stack's region when known at synth (a stack with `env`); `undefined` for an environment-agnostic one. */
  readonly region: string | undefined;
}

export interface Template {
  readonly Resources?: Record<string, TemplateResource>;
  readonly Rules?: Record<string, { Assertions?: { Assert: unknown; AssertDescription?: string }[] }>;
}

export interface TemplateResource {
  readonly Type: string;
  readonly Properties?: Record<string, unknown>;
  readonly DeletionPolicy?: string;
  readonly UpdateReplacePolicy?: string;
  readonly UpdatePolicy?: Record<string, unknown>;
}

/** What a check returns for one resource: its finding when it has a `problem`, else none. */
export function finding(logicalId: string, problem: string | undefined): RuleFinding[] {
  return problem === undefined ? [] : [{ logicalId, problem }];
}

/** The resources of `type`, as [logical id, resource] pairs. */
export function resourcesOfType(template: Template, type: string): [string, TemplateResource][] {
  return Object.entries(template.Resources ?? {}).filter(([, resource]) => resource.Type === type);
}

/** The logical id a `{Ref}` or `{"Fn::GetAtt": [id, …]}` points to, else `undefined`. */
export function referencedLogicalId(value: unknown): string | undefined {
  if (typeof value !== "object" || value === null) return undefined;
  const reference = value as { Ref?: unknown; "Fn::GetAtt"?: unknown };
  if (typeof reference.Ref === "string") return reference.Ref;
  const getAtt = reference["Fn::GetAtt"];
  if (Array.isArray(getAtt) && typeof getAtt[0] === "string") return getAtt[0];
  return undefined;
}

/**
 * A string value as far as synth knows it: the literal itself, or for `Fn::Join` its delimiter and parts,
 * each part a literal string or `undefined` where it is resolved only at deploy.
 */
export function knownParts(value: unknown): { delimiter: string; parts: (string | undefined)[] } | undefined {
  if (typeof value === "string") return { delimiter: "", parts: [value] };
  const join = (value as { "Fn::Join"?: unknown } | null)?.["Fn::Join"];
  if (!Array.isArray(join) || typeof join[0] !== "string" || !Array.isArray(join[1])) return undefined;
  return {
    delimiter: join[0],
    parts: join[1].map((part: unknown) => (typeof part === "string" ? part : undefined)),
  };
}
