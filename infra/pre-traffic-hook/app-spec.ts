import { parse } from "yaml";

/** The alias traffic moves on, and the version a Lambda deployment moves it to. */
export interface AliasTarget {
  readonly functionName: string;
  readonly alias: string;
  readonly targetVersion: string;
}

interface LambdaResource {
  Type?: unknown;
  Properties?: { Name?: unknown; Alias?: unknown; TargetVersion?: unknown };
}

/**
 * The target of a Lambda deployment, read from its AppSpec (JSON or YAML, as CodeDeploy keeps the
 * revision CloudFormation gave it): `Resources[].<name>.Properties` with `Name`, `Alias` and
 * `TargetVersion`. Throws unless there is exactly one function resource with a numeric target version:
 * the hook must never test a version it guessed.
 */
export function aliasTargetOf(appSpecContent: string): AliasTarget {
  const appSpec = parse(appSpecContent) as { Resources?: unknown } | null;
  const resources = Array.isArray(appSpec?.Resources)
    ? appSpec.Resources.flatMap((entry: Record<string, LambdaResource>) => Object.values(entry ?? {}))
    : [];
  const functions = resources.filter((resource) => resource?.Type === "AWS::Lambda::Function");
  if (functions.length !== 1) {
    throw new Error(`the AppSpec names ${functions.length} Lambda functions, expected 1`);
  }
  const { Name, Alias, TargetVersion } = functions[0]?.Properties ?? {};
  const targetVersion = typeof TargetVersion === "number" ? String(TargetVersion) : TargetVersion;
  if (typeof Name !== "string" || typeof Alias !== "string" || typeof targetVersion !== "string") {
    throw new Error("the AppSpec's function has no Name, Alias and TargetVersion");
  }
  if (!/^[1-9]\d*$/.test(targetVersion)) {
    throw new Error(`the AppSpec's TargetVersion "${targetVersion}" is not a published version number`);
  }
  return { functionName: Name, alias: Alias, targetVersion };
}
