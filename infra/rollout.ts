import { Validations } from "aws-cdk-lib";
import type { IAlarm } from "aws-cdk-lib/aws-cloudwatch";
import { LambdaDeploymentConfig, LambdaDeploymentGroup } from "aws-cdk-lib/aws-codedeploy";
import { PolicyStatement, Role, ServicePrincipal } from "aws-cdk-lib/aws-iam";
import type { Alias } from "aws-cdk-lib/aws-lambda";
import { Construct } from "constructs";
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
}

/**
 * Each deploy publishes a version; the alias's update goes through CodeDeploy instead of switching at
 * once, and a failed, stopped or alarming deployment returns the alias to the previous version.
 */
export class SafeRollout extends Construct {
  readonly deploymentGroup: LambdaDeploymentGroup;

  constructor(scope: Construct, id: string, props: SafeRolloutProps) {
    super(scope, id);
    const role = this.createRole(props.alias);
    this.deploymentGroup = new LambdaDeploymentGroup(this, "DeploymentGroup", {
      alias: props.alias,
      deploymentConfig: DEPLOYMENT_CONFIGS[props.deployment],
      alarms: props.rollbackAlarms,
      autoRollback: { failedDeployment: true, stoppedDeployment: true, deploymentInAlarm: true },
      // Immutable to CDK, which would otherwise attach AWSCodeDeployRoleForLambdaLimited to any role given.
      role: role.withoutPolicyUpdates(),
    });
    // The role's policy exists before the group can start a deployment.
    this.deploymentGroup.node.addDependency(role);
    // The deployment group (with this deploy's rollback alarms) is updated before CodeDeploy moves the alias.
    props.alias.node.addDependency(this.deploymentGroup);
  }

  /**
   * CodeDeploy's role, limited to this function's alias: AWSCodeDeployRoleForLambdaLimited, CDK's default,
   * may read and move the alias of every function in the account. No SNS, S3 or hook permissions: the
   * deployment group has no triggers, the AppSpec comes inline from CloudFormation, and there are no hooks.
   */
  private createRole(alias: Alias): Role {
    const role = new Role(this, "ServiceRole", {
      assumedBy: new ServicePrincipal("codedeploy.amazonaws.com"),
      description: "CodeDeploy for Plant Store: move the live alias of this function only, read alarm states",
    });
    // The alias's ARN built from the function's: a Ref to the alias would make it depend on this role.
    const aliasArn = `${alias.version.lambda.functionArn}:${alias.aliasName}`;
    role.addToPrincipalPolicy(
      new PolicyStatement({
        actions: ["lambda:GetAlias", "lambda:UpdateAlias", "lambda:GetProvisionedConcurrencyConfig"],
        resources: [alias.version.lambda.functionArn, aliasArn],
      }),
    );
    role.addToPrincipalPolicy(
      new PolicyStatement({
        actions: ["cloudwatch:DescribeAlarms"],
        resources: ["*"],
      }),
    );
    Validations.of(role).acknowledge({
      id: "AwsSolutions-IAM5[Resource::*]",
      reason:
        "cloudwatch:DescribeAlarms only reads alarm states; CodeDeploy polls the rollback alarms with it, " +
        "and a deployment that cannot read them stops. Every write is limited to this function's alias.",
    });
    return role;
  }
}
