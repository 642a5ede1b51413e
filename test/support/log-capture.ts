import { vi } from "vitest";

export interface LogCapture {
  /** Everything written so far, to stdout, stderr and the console, in order. */
  text(): string;
  /** The JSON lines written to stdout (the handler's request log). */
  stdoutLines(): string[];
  /** The last request log line, parsed. */
  lastLine(): Record<string, unknown>;
  restore(): void;
}

/**
 * Captures all log output of the process while it runs: process.stdout/stderr writes and every
 * console method (console writes go through stdout/stderr too, but a test runner may reroute them).
 */
export function captureLogs(): LogCapture {
  const written: string[] = [];
  const stdout: string[] = [];
  const asText = (chunk: unknown): string =>
    typeof chunk === "string"
      ? chunk
      : chunk instanceof Uint8Array
        ? Buffer.from(chunk).toString("utf8")
        : "";
  const spies = [
    vi.spyOn(process.stdout, "write").mockImplementation((chunk: unknown) => {
      written.push(asText(chunk));
      stdout.push(asText(chunk));
      return true;
    }),
    vi.spyOn(process.stderr, "write").mockImplementation((chunk: unknown) => {
      written.push(asText(chunk));
      return true;
    }),
    ...(["log", "info", "warn", "error", "debug", "trace", "dir"] as const).map((method) =>
      vi.spyOn(console, method).mockImplementation((...args: unknown[]) => {
        written.push(args.map((arg) => (typeof arg === "string" ? arg : safeInspect(arg))).join(" "));
      }),
    ),
  ];
  const stdoutLines = () =>
    stdout
      .join("")
      .split("\n")
      .filter((line) => line !== "");
  return {
    text: () => written.join("\n"),
    stdoutLines,
    lastLine: () => JSON.parse(stdoutLines().at(-1) ?? "") as Record<string, unknown>,
    restore: () => {
      for (const spy of spies) spy.mockRestore();
    },
  };
}

/** Runs `body` with the logs captured, restoring them however it ends. */
export async function withLogs<T>(body: (logs: LogCapture) => Promise<T>): Promise<T> {
  const logs = captureLogs();
  try {
    return await body(logs);
  } finally {
    logs.restore();
  }
}

function safeInspect(value: unknown): string {
  if (value instanceof Error) return `${value.stack ?? value.message} ${String(value.cause ?? "")}`;
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}
