/**
 * A setup file of every test file (vitest.config.ts). What the code under test writes straight to
 * process.stdout and process.stderr (the function's JSON log line, the CDK's "Bundling asset" line)
 * goes through the console instead, which vitest ties to the test that wrote it: with
 * `silent: "passed-only"` a failing test's lines are shown beside its failure, and a passing test's
 * are dropped. Tests that capture the output (log-capture.ts) spy on these writes as before.
 */
const streams = [
  [process.stdout, "log"],
  [process.stderr, "error"],
] as const;

for (const [stream, method] of streams) {
  stream.write = ((chunk: unknown, encodingOrCallback?: unknown, callback?: unknown): boolean => {
    const text = typeof chunk === "string" ? chunk : Buffer.from(chunk as Uint8Array).toString("utf8");
    console[method](text.replace(/\n$/, ""));
    const done = typeof encodingOrCallback === "function" ? encodingOrCallback : callback;
    if (typeof done === "function") done();
    return true;
  }) as typeof stream.write;
}
