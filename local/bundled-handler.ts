import { pathToFileURL } from "node:url";
import type { Handler } from "../lambda/http/create-handler.ts";
import { buildBundle } from "../tools/build-bundle.ts";
import { HANDLER_EXPORT } from "../tools/bundle-options.ts";

let loads = 0;
/** Loads run one at a time: each sets process.env around its import and puts it back after. */
let previousLoad: Promise<unknown> = Promise.resolve();

/**
 * Builds the deployable bundle (the stack's entry and options) and cold-starts a fresh instance of it
 * with `environment`. The handler reads process.env once, when its module is evaluated, and Node keeps
 * one module per URL: a distinct query string per load gives every start its own instance and so its
 * own configuration (a restart in the same process serves its key set on a new port). The variables are
 * set for the import only, then put back, so the caller's process.env ends as it was.
 */
export function loadBundledHandler(environment: Record<string, string>): Promise<Handler> {
  const load = previousLoad.then(() => loadOnce(environment));
  previousLoad = load.catch(() => undefined);
  return load;
}

async function loadOnce(environment: Record<string, string>): Promise<Handler> {
  const bundlePath = await buildBundle();
  loads += 1;
  const previous = Object.fromEntries(Object.keys(environment).map((name) => [name, process.env[name]]));
  Object.assign(process.env, environment);
  try {
    const bundle = (await import(`${pathToFileURL(bundlePath).href}?instance=${loads}`)) as Record<
      string,
      unknown
    >;
    const handler = bundle[HANDLER_EXPORT];
    if (typeof handler !== "function") throw new Error(`${bundlePath} does not export ${HANDLER_EXPORT}()`);
    return handler as Handler;
  } finally {
    for (const [name, value] of Object.entries(previous)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  }
}
