import { logWarning } from "../log.ts";
import { THROTTLING_TYPES } from "../store/dynamodb-faults.ts";
import type { InvocationTracing, TracingSettings } from "./invocation-tracing.ts";
import { isTraced, parseDaemonAddress, type TraceHeader } from "./trace-header.ts";

/** AWS_XRAY_DAEMON_ADDRESS as Lambda sets it, and what the DynamoDB subsegments name. */
export type SampledTracingSettings = Pick<TracingSettings, "tableName" | "region"> & {
  daemonAddress: string;
};

/** The function's traces, as the handler and its calls see them (lambda/dependencies.ts wires them). */
export interface SampledTracing extends Omit<InvocationTracing, "run"> {
  /** Runs one invocation, inside its trace when its header is sampled; as is otherwise. */
  run<T>(header: TraceHeader | undefined, invocation: () => Promise<T>): Promise<T>;
}

/**
 * The traces, loaded at the first invocation X-Ray samples: the tracing module (invocation-tracing.ts, a
 * chunk of the bundle of its own) and, with it, node:dgram and node:async_hooks. An instance none of whose
 * invocations is sampled never loads them, so a cold start pays nothing for tracing; what an instance calls
 * before its first sampled invocation (the init's key-set prefetch, when no key set was delivered) is not
 * traced. Undefined, with one WARN line, when the daemon's address is not one.
 */
export function sampledInvocationTracing(settings: SampledTracingSettings): SampledTracing | undefined {
  const address = parseDaemonAddress(settings.daemonAddress);
  if (address === undefined) {
    logWarning("AWS_XRAY_DAEMON_ADDRESS is not host:port; nothing is traced", {
      detail: settings.daemonAddress,
    });
    return undefined;
  }
  let tracing: InvocationTracing | undefined;
  let loading: Promise<InvocationTracing> | undefined;
  const load = () =>
    (loading ??= import("./invocation-tracing.ts").then(({ createInvocationTracing }) => {
      tracing = createInvocationTracing({ ...settings, address, throttlingTypes: THROTTLING_TYPES });
      return tracing;
    }));
  return {
    run(header, invocation) {
      if (!isTraced(header)) return invocation();
      if (tracing) return tracing.run(header, invocation);
      return load().then(
        (loaded) => loaded.run(header, invocation),
        // Tracing could not start: the invocation runs untraced rather than not at all.
        () => invocation(),
      );
    },
    observeDynamoDbCall: (operation) => tracing?.observeDynamoDbCall(operation),
    observeKeySetFetch: (url) => tracing?.observeKeySetFetch(url),
  };
}
