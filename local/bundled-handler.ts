import { pathToFileURL } from "node:url";
import type { Handler } from "../lambda/http/create-handler.ts";
import { BUNDLE_PATH, buildBundle } from "../tools/build-bundle.ts";
import { HANDLER_FACTORY_EXPORT } from "../tools/bundle-options.ts";

/** The deployable bundle's factory: a fresh handler instance, with its own configuration, per call. */
export type HandlerFactory = (environment: Record<string, string>) => Handler;

/**
 * Set to the bundle's path by whoever built it just before (the test run, test/support/global-setup.ts):
 * that bundle is imported as it is. In a copy of the repository, whose bundle is elsewhere, it is ignored.
 */
export const BUILT_BUNDLE_VARIABLE = "PLANT_STORE_BUILT_BUNDLE";

let factory: Promise<HandlerFactory> | undefined;

/**
 * Builds the deployable bundle (the stack's entry and options) and imports it, once per process. Each
 * start then calls its `handlerFor(environment)`, which reads that configuration and makes its own
 * authenticator and store: a restart in the same process serves its key set on a new port.
 */
export function loadHandlerFactory(): Promise<HandlerFactory> {
  // A failed build may be fixed before the next start in the same process: do not keep the failure.
  factory ??= importFactory().catch((error: unknown) => {
    factory = undefined;
    throw error;
  });
  return factory;
}

async function importFactory(): Promise<HandlerFactory> {
  const built = process.env[BUILT_BUNDLE_VARIABLE];
  const bundlePath = built === BUNDLE_PATH ? built : await buildBundle();
  const bundle = (await import(pathToFileURL(bundlePath).href)) as Record<string, unknown>;
  const handlerFor = bundle[HANDLER_FACTORY_EXPORT];
  if (typeof handlerFor !== "function") {
    throw new Error(`${bundlePath} does not export ${HANDLER_FACTORY_EXPORT}()`);
  }
  return handlerFor as HandlerFactory;
}
