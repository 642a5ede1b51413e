import { CfnResource, RemovalPolicy, Stack } from "aws-cdk-lib";
import { type PolicyStatement, Role, ServicePrincipal } from "aws-cdk-lib/aws-iam";
import {
  Architecture,
  type Function as LambdaFunction,
  LoggingFormat,
  Runtime,
} from "aws-cdk-lib/aws-lambda";
import { LogGroup, RetentionDays } from "aws-cdk-lib/aws-logs";
import type { Construct } from "constructs";

/** What every function of the stack runs on, and how it logs. */
export const FUNCTION_BASICS = {
  runtime: Runtime.NODEJS_24_X,
  architecture: Architecture.ARM_64,
  loggingFormat: LoggingFormat.JSON,
};

/** FUNCTION_BASICS, and the log group and role of its own a function gets from ownFunction(). */
export type OwnFunctionProps = typeof FUNCTION_BASICS & { readonly logGroup: LogGroup; readonly role: Role };

/**
 * A function made by `create` with a log group of its own (`<prefix>LogGroup`, a month) and a role of its
 * own (`<prefix>Role`) that may write there and do what `statements` allow, nothing else.
 *
 * A function made with its own role depends on the role and on the role's default policy. The role is
 * referenced already (the function's `Role`), which cfn-lint reports as a redundant DependsOn (W3005); the
 * policy must stay, or the function could run before it may write its log. The override replaces the
 * function's DependsOn list with the policy alone.
 */
export function ownFunction<F extends LambdaFunction>(
  scope: Construct,
  prefix: string,
  roleDescription: string,
  statements: PolicyStatement[],
  create: (props: OwnFunctionProps) => F,
): F {
  const logGroup = new LogGroup(scope, `${prefix}LogGroup`, {
    retention: RetentionDays.ONE_MONTH,
    removalPolicy: RemovalPolicy.DESTROY,
  });
  const role = new Role(scope, `${prefix}Role`, {
    assumedBy: new ServicePrincipal("lambda.amazonaws.com"),
    description: roleDescription,
  });
  logGroup.grantWrite(role);
  for (const statement of statements) role.addToPrincipalPolicy(statement);
  const fn = create({ ...FUNCTION_BASICS, logGroup, role });
  const policy = role.node.tryFindChild("DefaultPolicy")?.node.defaultChild;
  if (!(policy instanceof CfnResource)) throw new Error(`the role of ${fn.node.path} has no default policy`);
  (fn.node.defaultChild as CfnResource).addOverride("DependsOn", [Stack.of(fn).getLogicalId(policy)]);
  return fn;
}
