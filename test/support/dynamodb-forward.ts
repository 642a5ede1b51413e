import type { IncomingMessage } from "node:http";

/** The whole body of a request a proxy in front of DynamoDB received. */
export async function readRequestBody(request: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/**
 * Sends a call a proxy in front of DynamoDB received on to `upstream` as it came (its signature still
 * holds: the proxy only drops the hop-by-hop headers), and returns the answer to pass back.
 */
export async function forwardToDynamoDb(
  upstream: string,
  request: IncomingMessage,
  body: Buffer,
): Promise<{ status: number; contentType: string; body: string }> {
  const headers = new Headers();
  for (const [name, value] of Object.entries(request.headers)) {
    if (typeof value === "string" && !["host", "connection", "content-length"].includes(name)) {
      headers.set(name, value);
    }
  }
  const answer = await fetch(upstream, { method: "POST", headers, body: new Uint8Array(body) });
  return {
    status: answer.status,
    contentType: answer.headers.get("content-type") ?? "application/x-amz-json-1.0",
    body: await answer.text(),
  };
}
