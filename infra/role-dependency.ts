import { CfnResource, Stack } from "aws-cdk-lib";
import type { Role } from "aws-cdk-lib/aws-iam";
import type { Function as LambdaFunction } from "aws-cdk-lib/aws-lambda";

/**
 * A Lambda function made with its own role depends on the role and on the role's default policy. The
 * role is referenced already (the function's `Role`), which cfn-lint reports as a redundant DependsOn
 * (W3005); the policy must stay, or the function could run before it may write its log. The override
 * replaces the function's DependsOn list with the policy alone.
 */
export function dependOnRolePolicyOnly(fn: LambdaFunction, role: Role): void {
  const policy = role.node.tryFindChild("DefaultPolicy")?.node.defaultChild;
  if (!(policy instanceof CfnResource)) throw new Error(`the role of ${fn.node.path} has no default policy`);
  (fn.node.defaultChild as CfnResource).addOverride("DependsOn", [Stack.of(fn).getLogicalId(policy)]);
}
