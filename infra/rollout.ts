import { type CfnResource, Lazy, Stack, Token, Validations } from "aws-cdk-lib";
import type { IAlarm } from "aws-cdk-lib/aws-cloudwatch";
import { LambdaDeploymentConfig, LambdaDeploymentGroup } from "aws-cdk-lib/aws-codedeploy";
import { type Policy, PolicyStatement, Role, ServicePrincipal } from "aws-cdk-lib/aws-iam";
import type { Alias, IFunction } from "aws-cdk-lib/aws-lambda";
import { Construct } from "constructs";
import { rollbackAlarmNamePrefix } from "./alarms.ts";
import type { DeploymentStyle } from "./config.ts";

/** The alias the API invokes; CodeDeploy moves it from one published version to the next. */
export const LIVE_ALIAS_NAME = "live";

const DEPLOYMENT_CONFIGS = {
  // 10% of invocations on the new version for 5 minutes, then all of them.
  canary: LambdaDeploymentConfig.CANARY_10PERCENT_5MINUTES,
  "all-at-once": LambdaDeploymentConfig.ALL_AT_ONCE,
} as const satisfies Record<DeploymentStyle, unknown>;

export interface SafeRolloutProps {
  /** The alias whose version each deploy replaces (`currentVersion` of the function). */
  readonly alias: Alias;
  readonly deployment: DeploymentStyle;
  /** Any of them in ALARM while traffic shifts stops the deployment and moves the alias back. */
  readonly rollbackAlarms: IAlarm[];
  /** Run by CodeDeploy before any traffic moves (BeforeAllowTraffic); it fails the deployment or lets it go on. */
  readonly preTrafficHook: IFunction;
}

/**
 * Each deploy publishes a version; the alias's update goes through CodeDeploy instead of switching at
 * once, and a failed, stopped or alarming deployment returns the alias to the previous version.
 */
export class SafeRollout extends Construct {
  readonly deploymentGroup: LambdaDeploymentGroup;

  constructor(scope: Construct, id: string, props: SafeRolloutProps) {
    super(scope, id);
    // The application's name, known once the group (which creates the application) exists: the role's
    // trust names it, and nothing of the application refers back to the role.
    const applicationName = Lazy.string({ produce: () => this.deploymentGroup.application.applicationName });
    const role = this.createRole(props.alias, props.preTrafficHook, applicationName);
    this.deploymentGroup = new LambdaDeploymentGroup(this, "DeploymentGroup", {
      alias: props.alias,
      deploymentConfig: DEPLOYMENT_CONFIGS[props.deployment],
      alarms: props.rollbackAlarms,
      autoRollback: { failedDeployment: true, stoppedDeployment: true, deploymentInAlarm: true },
      // Immutable to CDK, which would otherwise attach AWSCodeDeployRoleForLambdaLimited to any role given.
      role: role.withoutPolicyUpdates(),
    });
    // The hook is named here rather than given as `preHook`, whose grants would go to the hook's default
    // policy and make a cycle (infra/pre-traffic-check.ts, allowDeploymentAccess).
    (props.alias.node.defaultChild as CfnResource).addOverride(
      "UpdatePolicy.CodeDeployLambdaAliasUpdate.BeforeAllowTrafficHook",
      props.preTrafficHook.functionName,
    );
    // The role's policy exists before the group can start a deployment (the group's reference to the role
    // itself orders the role). The alias refers to the group and the hook in its UpdatePolicy, which orders
    // them before CodeDeploy moves it: no DependsOn for either, which cfn-lint reports as redundant (W3005).
    this.deploymentGroup.node.defaultChild?.node.addDependency(
      role.node.findChild("DefaultPolicy") as Policy,
    );
  }

  /**
   * CodeDeploy's role, limited to this function's alias: AWSCodeDeployRoleForLambdaLimited, CDK's default,
   * may read and move the alias of every function in the account. No SNS or S3 permissions: the deployment
   * group has no triggers, and the AppSpec comes inline from CloudFormation. Only CodeDeploy acting for a
   * deployment group of this stack's application, in this account, may assume it (CodeDeploy User Guide,
   * "Cross-service confused deputy prevention": aws:SourceArn is the deployment group's ARN).
   */
  private createRole(alias: Alias, preTrafficHook: IFunction, applicationName: string): Role {
    const stack = Stack.of(this);
    const role = new Role(this, "ServiceRole", {
      assumedBy: new ServicePrincipal("codedeploy.amazonaws.com", {
        conditions: {
          StringEquals: { "aws:SourceAccount": stack.account },
          ArnLike: {
            "aws:SourceArn": `arn:${stack.partition}:codedeploy:${stack.region}:${stack.account}:deploymentgroup:${applicationName}/*`,
          },
        },
      }),
      description:
        "CodeDeploy for Plant Store: move the live alias of this function only, run its pre-traffic hook, read its rollback alarms",
    });
    // The alias's ARN built from the function's: a Ref to the alias would make it depend on this role.
    const aliasArn = `${alias.version.lambda.functionArn}:${alias.aliasName}`;
    // The rollback alarms' name prefix, not their ARNs: each deploy names new alarms, and a policy changed
    // seconds before CodeDeploy first reads them could still be propagating (a failed read stops the rollout).
    const alarmNamePattern = `${rollbackAlarmNamePrefix(stack.stackName)}*`;
    const allow = (actions: string[], resources: string[]) =>
      role.addToPrincipalPolicy(new PolicyStatement({ actions, resources }));
    allow(
      ["lambda:GetAlias", "lambda:UpdateAlias", "lambda:GetProvisionedConcurrencyConfig"],
      [alias.version.lambda.functionArn, aliasArn],
    );
    allow(["lambda:InvokeFunction"], [preTrafficHook.functionArn]);
    allow(
      ["cloudwatch:DescribeAlarms"],
      [`arn:${stack.partition}:cloudwatch:${stack.region}:${stack.account}:alarm:${alarmNamePattern}`],
    );
    // cdk-nag names the resource as synthesized: pseudo parameters, or an environment's own values.
    const shown = (value: string, pseudo: string) => (Token.isUnresolved(value) ? `<AWS::${pseudo}>` : value);
    const shownArn = `arn:${shown(stack.partition, "Partition")}:cloudwatch:${shown(stack.region, "Region")}:${shown(stack.account, "AccountId")}:alarm:${alarmNamePattern}`;
    Validations.of(role).acknowledge({
      id: `AwsSolutions-IAM5[Resource::${shownArn}]`,
      reason:
        "cloudwatch:DescribeAlarms on this stack's rollback alarms only, which each deploy replaces with " +
        "alarms named after the new version. It only reads their states; every write is limited to this " +
        "function's alias.",
    });
    return role;
  }
}
