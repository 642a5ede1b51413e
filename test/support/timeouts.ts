/**
 * How long a test (or a hook) may run before it is taken for hung. Not a speed check (the bench measures
 * speed): the suite runs its files in parallel, each often with child processes of its own, so on a busy
 * machine a test that takes seconds alone can take minutes. Only a hang should fail it.
 */
export const TEST_TIMEOUT_MS = 120_000;
export const HOOK_TIMEOUT_MS = 180_000;
