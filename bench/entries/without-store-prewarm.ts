/**
 * The shipped handler without the store's connection opened at init, built at import from process.env
 * as lambda/handler.ts builds it in Lambda: what opening it ahead saves is this row against the handler's.
 */
import { readConfig } from "../../lambda/config.ts";
import { productionDependencies, SHIPPED_LEVERS } from "../../lambda/dependencies.ts";
import { createHandler } from "../../lambda/http/create-handler.ts";

export const handler = createHandler(
  productionDependencies(readConfig(process.env), { ...SHIPPED_LEVERS, prewarmStore: false }),
);
