/** The shipped handler with nothing started at init. */
import { handlerWithLevers } from "./levered-handler.ts";

export const handler = handlerWithLevers({ prefetchKeys: false, prewarmStore: false });
