/** The Lambda entry point of the pre-traffic hook (infra/pre-traffic-check.ts deploys it). */
import { CodeDeployClient } from "@aws-sdk/client-codedeploy";
import { LambdaClient } from "@aws-sdk/client-lambda";
import { PROBED_FUNCTION_VARIABLE } from "./environment.ts";
import { createPreTrafficHook } from "./hook.ts";

const functionName = process.env[PROBED_FUNCTION_VARIABLE];
if (functionName === undefined || functionName === "") {
  throw new Error(`${PROBED_FUNCTION_VARIABLE} is not set`);
}

export const handler = createPreTrafficHook({
  codeDeploy: new CodeDeployClient({}),
  lambda: new LambdaClient({}),
  functionName,
  now: () => new Date(),
  log: (line) => console.log(line),
});
