import { Validations } from "aws-cdk-lib";
import type { IAlarm } from "aws-cdk-lib/aws-cloudwatch";
import { LambdaDeploymentConfig, LambdaDeploymentGroup } from "aws-cdk-lib/aws-codedeploy";
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

/** The AWS managed policy CDK gives the deployment group's service role. */
const CODEDEPLOY_LAMBDA_POLICY = "AWSCodeDeployRoleForLambdaLimited";

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
    this.deploymentGroup = new LambdaDeploymentGroup(this, "DeploymentGroup", {
      alias: props.alias,
      deploymentConfig: DEPLOYMENT_CONFIGS[props.deployment],
      alarms: props.rollbackAlarms,
      autoRollback: { failedDeployment: true, stoppedDeployment: true, deploymentInAlarm: true },
    });
    Validations.of(this.deploymentGroup.role).acknowledge({
      id: `AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/${CODEDEPLOY_LAMBDA_POLICY}]`,
      reason:
        "CodeDeploy's own service-role policy for Lambda, maintained by AWS: read alarms, read and move " +
        "aliases, notify SNS, invoke only functions named CodeDeployHook_*. An inline copy would need " +
        "the same wildcards.",
    });
  }
}
