/** The shipped handler without the key set fetched at init. */
import { SHIPPED_LEVERS } from "../../lambda/dependencies.ts";
import { handlerWithLevers } from "./levered-handler.ts";

export const handler = handlerWithLevers({ ...SHIPPED_LEVERS, prefetchKeys: false });
