/**
 * The types lambda/tracing/ still imports; this file goes with lambda/tracing/ (issue 46 item 6): the key-set
 * download is aws-jwt-verify's now (issuer-keys.ts) and is not observed.
 */
export interface KeySetFetchOutcome {
  status?: number;
  failure?: unknown;
}

export type KeySetFetchObserver = (url: string) => ((outcome: KeySetFetchOutcome) => void) | undefined;
