/** The hook's environment variable naming the function whose versions it probes (set by the stack). */
export const PROBED_FUNCTION_VARIABLE = "PROBED_FUNCTION_NAME";
