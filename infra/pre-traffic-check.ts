import { fileURLToPath } from "node:url";
import { Duration, Stack, Validations } from "aws-cdk-lib";
import type { ILambdaDeploymentGroup } from "aws-cdk-lib/aws-codedeploy";
import { Policy, PolicyStatement } from "aws-cdk-lib/aws-iam";
import type { Alias, IFunction } from "aws-cdk-lib/aws-lambda";
import { LogLevel, NodejsFunction, OutputFormat } from "aws-cdk-lib/aws-lambda-nodejs";
import { Construct } from "constructs";
import { ownFunction } from "./own-function.ts";
import { PROBED_FUNCTION_VARIABLE } from "./pre-traffic-hook/environment.ts";

const HOOK_ENTRY = fileURLToPath(new URL("./pre-traffic-hook/entry.ts", import.meta.url));

/**
 * The probed function's invoke (a cold start of the new version is well under its own 10 s timeout) plus
 * the CodeDeploy calls around it.
 */
const HOOK_TIMEOUT = Duration.seconds(30);

export interface PreTrafficCheckProps {
  /** The function whose new version each deployment must prove before traffic moves to it. */
  readonly probedFunction: IFunction;
}

/**
 * The BeforeAllowTraffic hook of the rollout: a small function that invokes the version a deployment
 * moves the live alias to with a request without a token, and fails the deployment unless that version
 * answers the API's 401 with its challenge (./pre-traffic-hook/). Its role may invoke the probed function's
 * versions, read the deployments of its one deployment group and report the hook's status there.
 */
export class PreTrafficCheck extends Construct {
  readonly hook: NodejsFunction;

  constructor(scope: Construct, id: string, props: PreTrafficCheckProps) {
    super(scope, id);
    const { functionArn } = props.probedFunction;
    // A qualified ARN: `<function>:<version>`. IAM cannot tell a version from an alias, so the alias
    // `live` matches too; the hook invokes the version its deployment names, never the alias.
    const invoke = new PolicyStatement({
      actions: ["lambda:InvokeFunction"],
      resources: [`${functionArn}:*`],
    });
    const roleDescription =
      "Plant Store pre-traffic hook: invoke the new version, read and report its deployment";
    const probedId = Stack.of(this).getLogicalId(props.probedFunction.node.defaultChild as never);
    this.hook = ownFunction(this, "", roleDescription, [invoke], (common) => {
      Validations.of(common.role).acknowledge({
        id: `AwsSolutions-IAM5[Resource::<${probedId}.Arn>:*]`,
        reason:
          "lambda:InvokeFunction on the probed function's qualified ARNs only: each deploy publishes a new " +
          "version, whose number is known only at deploy time.",
      });
      return new NodejsFunction(this, "Function", {
        ...common,
        entry: HOOK_ENTRY,
        handler: "handler",
        memorySize: 256,
        timeout: HOOK_TIMEOUT,
        description:
          "CodeDeploy BeforeAllowTraffic: the new version must answer a request without a token with 401",
        environment: { [PROBED_FUNCTION_VARIABLE]: props.probedFunction.functionName },
        bundling: {
          format: OutputFormat.CJS,
          minify: true,
          target: "node24",
          // The SDK clients are bundled at the versions the tests ran, not taken from the runtime.
          externalModules: [],
          // esbuild's list of what it wrote is noise in `cdk synth` and the tests; its warnings are not.
          logLevel: LogLevel.WARNING,
        },
      });
    });
  }

  /**
   * What the hook does in the rollout's deployment group: read its deployments (and, when not inline,
   * their AppSpec) and report its status there, in a policy of its own that the alias's update waits for.
   * Not in the role's default policy: the hook function depends on that one, CodeDeploy's role names the
   * hook, and the group names CodeDeploy's role, which would make a cycle.
   */
  allowDeploymentAccess(deploymentGroup: ILambdaDeploymentGroup, alias: Alias): void {
    const policy = new Policy(this, "DeploymentAccess", {
      statements: [
        new PolicyStatement({
          actions: ["codedeploy:GetDeployment", "codedeploy:PutLifecycleEventHookExecutionStatus"],
          resources: [deploymentGroup.deploymentGroupArn],
        }),
        new PolicyStatement({
          actions: ["codedeploy:GetApplicationRevision"],
          resources: [deploymentGroup.application.applicationArn],
        }),
      ],
    });
    this.hook.role?.attachInlinePolicy(policy);
    alias.node.defaultChild?.node.addDependency(policy);
  }
}
