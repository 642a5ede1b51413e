import { type Environment, readConfig } from "./config.ts";
import { productionDependencies } from "./dependencies.ts";
import { createHandler, type Handler } from "./http/create-handler.ts";

/**
 * A handler for the configuration in `env`, read once, here: a missing or malformed setting throws with a
 * message naming it. The local run and tests call it with their own environment, one instance per call.
 */
export function handlerFor(env: Environment): Handler {
  return createHandler(productionDependencies(readConfig(env)));
}

/** Set by the Lambda runtime in every function's environment. */
const runningInLambda = process.env.AWS_LAMBDA_FUNCTION_NAME !== undefined;

/**
 * The Lambda entry point. In Lambda the configuration is read at init, so a bad setting fails the cold
 * start rather than the first request. Elsewhere, importing the bundle must not require the variables:
 * the handler is then built from process.env on its first call.
 */
export const handler: Handler = runningInLambda ? handlerFor(process.env) : handlerOnFirstCall();

function handlerOnFirstCall(): Handler {
  let built: Handler | undefined;
  return (event, context) => {
    built ??= handlerFor(process.env);
    return built(event, context);
  };
}
