export interface RequestLogEntry {
  requestId: string;
  status: number;
  latencyMs: number;
  errorKind?: string;
  /** The authenticated caller's OAuth client, for audit: an identifier, not a credential. */
  clientId?: string | undefined;
  plantId?: string;
  /** For 5xx answers only: what failed underneath, never a credential. */
  detail?: string;
}

/**
 * One JSON line per request on stdout. Written around the runtime's console so the line stays a
 * queryable JSON object in CloudWatch (Logs Insights reads its fields) under either log format.
 */
export function logRequest(entry: RequestLogEntry): void {
  process.stdout.write(`${JSON.stringify({ level: entry.status >= 500 ? "ERROR" : "INFO", ...entry })}\n`);
}
