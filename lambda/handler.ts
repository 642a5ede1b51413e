import { readConfig } from "./config.ts";
import { productionDependencies } from "./dependencies.ts";
import { createHandler } from "./http/create-handler.ts";

/** The Lambda entry point. Configuration is read once, here: a bad setting fails the cold start. */
export const handler = createHandler(productionDependencies(readConfig(process.env)));
