/** The shipped handler without the store's connection opened at init. */
import { SHIPPED_LEVERS } from "../../lambda/dependencies.ts";
import { handlerWithLevers } from "./levered-handler.ts";

export const handler = handlerWithLevers({ ...SHIPPED_LEVERS, prewarmStore: false });
