import {
  type CodeDeployClient,
  type DeploymentInfo,
  GetApplicationRevisionCommand,
  GetDeploymentCommand,
  LifecycleEventStatus,
  PutLifecycleEventHookExecutionStatusCommand,
} from "@aws-sdk/client-codedeploy";
import { InvokeCommand, type LambdaClient } from "@aws-sdk/client-lambda";
import { aliasTargetOf } from "./app-spec.ts";
import { judgeProbeAnswer, noTokenProbeEvent, type ProbeVerdict } from "./probe.ts";

/** What CodeDeploy invokes a lifecycle hook with. */
export interface LifecycleHookEvent {
  readonly DeploymentId: string;
  readonly LifecycleEventHookExecutionId: string;
}

export interface PreTrafficHookDependencies {
  readonly codeDeploy: CodeDeployClient;
  readonly lambda: LambdaClient;
  /** The function whose alias the deployment moves: the only one the hook probes. */
  readonly functionName: string;
  readonly now: () => Date;
  /** One JSON line per deployment checked. */
  readonly log: (line: string) => void;
  /** How long the check may take before it reports Failed (PRE_TRAFFIC_CHECK_TIMEOUT_MS). */
  readonly checkTimeoutMs?: number;
}

/**
 * The check's time: the probed version's cold start and its own 10 s timeout fit in it, and the report
 * still fits in the hook's 30 s (infra/pre-traffic-check.ts). An AWS call that stalls (the SDK's clients
 * have no timeout of their own) then fails the check rather than the hook's reporting.
 */
export const PRE_TRAFFIC_CHECK_TIMEOUT_MS = 20_000;

/**
 * CodeDeploy's BeforeAllowTraffic hook: finds the version the deployment moves the alias to (its AppSpec),
 * invokes that version with a request without a token (./probe.ts) and reports Succeeded only for the
 * API's 401 and its challenge. Every other outcome, a failure to read the deployment included, reports
 * Failed, so that CodeDeploy stops the deployment and no traffic reaches the version; a hook that never
 * reported would leave the deployment waiting for an hour.
 */
export function createPreTrafficHook(dependencies: PreTrafficHookDependencies) {
  return async (event: LifecycleHookEvent): Promise<void> => {
    const { DeploymentId: deploymentId, LifecycleEventHookExecutionId: lifecycleEventHookExecutionId } =
      event;
    const checkTime = AbortSignal.timeout(dependencies.checkTimeoutMs ?? PRE_TRAFFIC_CHECK_TIMEOUT_MS);
    const { verdict, targetVersion } = await probeTargetVersion(dependencies, deploymentId, checkTime).catch(
      (error: unknown) => ({
        verdict: { passed: false, reason: `the check could not run: ${errorMessage(error)}` } as ProbeVerdict,
        targetVersion: undefined,
      }),
    );
    const status = verdict.passed ? LifecycleEventStatus.SUCCEEDED : LifecycleEventStatus.FAILED;
    dependencies.log(
      JSON.stringify({
        message: "pre-traffic check",
        deploymentId,
        functionName: dependencies.functionName,
        targetVersion,
        status,
        ...(verdict.passed ? {} : { reason: verdict.reason }),
      }),
    );
    await dependencies.codeDeploy.send(
      new PutLifecycleEventHookExecutionStatusCommand({
        deploymentId,
        lifecycleEventHookExecutionId,
        status,
      }),
    );
  };
}

async function probeTargetVersion(
  { codeDeploy, lambda, functionName, now }: PreTrafficHookDependencies,
  deploymentId: string,
  abortSignal: AbortSignal,
): Promise<{ verdict: ProbeVerdict; targetVersion: string | undefined }> {
  const { deploymentInfo } = await codeDeploy.send(new GetDeploymentCommand({ deploymentId }), {
    abortSignal,
  });
  const target = aliasTargetOf(await appSpecContent(codeDeploy, deploymentInfo, abortSignal));
  if (target.functionName !== functionName && !target.functionName.endsWith(`:function:${functionName}`)) {
    return {
      verdict: { passed: false, reason: `the deployment moves ${target.functionName}, not ${functionName}` },
      targetVersion: target.targetVersion,
    };
  }
  const invocation = await lambda.send(
    new InvokeCommand({
      FunctionName: functionName,
      Qualifier: target.targetVersion,
      Payload: JSON.stringify(noTokenProbeEvent(`pre-traffic-${deploymentId}`, now())),
    }),
    { abortSignal },
  );
  const verdict = judgeProbeAnswer({
    functionError: invocation.FunctionError,
    payload: new TextDecoder().decode(invocation.Payload ?? new Uint8Array()),
  });
  return { verdict, targetVersion: target.targetVersion };
}

/**
 * The deployment's AppSpec: inline in its revision (as CloudFormation gives it), or else read from the
 * application's revision.
 */
async function appSpecContent(
  codeDeploy: CodeDeployClient,
  info: DeploymentInfo | undefined,
  abortSignal: AbortSignal,
): Promise<string> {
  const inline = info?.revision?.appSpecContent?.content ?? info?.revision?.string?.content;
  if (inline) return inline;
  if (info?.applicationName === undefined || info.revision === undefined) {
    throw new Error("the deployment names no application revision");
  }
  const { revision } = await codeDeploy.send(
    new GetApplicationRevisionCommand({ applicationName: info.applicationName, revision: info.revision }),
    { abortSignal },
  );
  const content = revision?.appSpecContent?.content ?? revision?.string?.content;
  if (!content) throw new Error("the deployment's revision holds no AppSpec");
  return content;
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}
