import { readConfig } from "../../lambda/config.ts";
import { type ColdStartLevers, productionDependencies } from "../../lambda/dependencies.ts";
import { createHandler, type Handler } from "../../lambda/http/create-handler.ts";

/**
 * The handler as lambda/handler.ts builds it in Lambda, at init from process.env, but with `levers`:
 * the cold path runs every bundle as Lambda would (AWS_LAMBDA_FUNCTION_NAME set), so its entry builds
 * it at import.
 */
export function handlerWithLevers(levers: ColdStartLevers): Handler {
  return createHandler(productionDependencies(readConfig(process.env), levers));
}
