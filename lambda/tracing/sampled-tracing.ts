import type { InvocationTracing, TracingSettings } from "./invocation-tracing.ts";
import { isTraced } from "./trace-header.ts";

/**
 * The traces, loaded at the first invocation X-Ray samples: the tracing module (a chunk of the bundle of
 * its own) and, with it, node:dgram and node:async_hooks. An instance none of whose invocations is sampled
 * never loads them, so a cold start pays nothing for tracing; what an instance calls before its first
 * sampled invocation (the init's key-set prefetch, when no key set was delivered) is not traced.
 */
export function sampledInvocationTracing(settings: TracingSettings): InvocationTracing {
  let tracing: InvocationTracing | undefined;
  let loading: Promise<InvocationTracing | undefined> | undefined;
  const load = () =>
    (loading ??= import("./invocation-tracing.ts").then(
      ({ createInvocationTracing }) => (tracing = createInvocationTracing(settings)),
    ));
  return {
    run(header, invocation) {
      if (tracing) return tracing.run(header, invocation);
      if (!isTraced(header)) return invocation();
      return load().then(
        (loaded) => (loaded ? loaded.run(header, invocation) : invocation()),
        // Tracing could not start: the invocation runs untraced rather than not at all.
        () => invocation(),
      );
    },
    observeDynamoDbCall: (operation) => tracing?.observeDynamoDbCall(operation),
    observeKeySetFetch: (url) => tracing?.observeKeySetFetch(url),
  };
}
