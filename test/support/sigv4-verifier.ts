import { createHash, createHmac } from "node:crypto";
import type { IncomingHttpHeaders } from "node:http";

export interface ReceivedRequest {
  method: string;
  /** The request target as received, e.g. `/`. */
  path: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

/**
 * Checks a request's SigV4 signature the way the service does, from what arrived on the wire: the
 * canonical request rebuilt from the received method, path, signed headers and body, signed with the
 * secret key. Written from AWS's specification, independently of the signer under test. Returns why the
 * signature is refused, or undefined when it is valid.
 */
export function sigV4Refusal(
  request: ReceivedRequest,
  expected: { secretAccessKey: string; accessKeyId: string; region: string; service: string },
): string | undefined {
  const authorization = request.headers.authorization;
  const match =
    /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request, ?SignedHeaders=([a-z0-9;-]+), ?Signature=([0-9a-f]{64})$/.exec(
      authorization ?? "",
    );
  if (!match) return `malformed Authorization header`;
  const [, accessKeyId, date, region, service, signedHeaderList, signature] = match as unknown as string[];
  if (accessKeyId !== expected.accessKeyId) return `signed by ${accessKeyId}`;
  if (region !== expected.region || service !== expected.service) return `scoped to ${region}/${service}`;
  const amzDate = String(request.headers["x-amz-date"] ?? "");
  if (!amzDate.startsWith(date ?? "-")) return `x-amz-date ${amzDate} is not of the credential's day`;
  const signedHeaders = (signedHeaderList ?? "").split(";");
  for (const required of ["host", "x-amz-date"]) {
    if (!signedHeaders.includes(required)) return `${required} is not signed`;
  }
  for (const name of Object.keys(request.headers)) {
    if (name.startsWith("x-amz-") && !signedHeaders.includes(name)) return `${name} is sent but not signed`;
  }

  const canonicalHeaders = signedHeaders
    .map(
      (name) =>
        `${name}:${String(request.headers[name] ?? "")
          .trim()
          .replace(/\s+/g, " ")}\n`,
    )
    .join("");
  const canonicalRequest = [
    request.method,
    request.path,
    "",
    canonicalHeaders,
    signedHeaders.join(";"),
    sha256Hex(request.body),
  ].join("\n");
  const scope = `${date}/${region}/${service}/aws4_request`;
  const stringToSign = ["AWS4-HMAC-SHA256", amzDate, scope, sha256Hex(canonicalRequest)].join("\n");
  let key: Buffer = Buffer.from(`AWS4${expected.secretAccessKey}`);
  for (const part of [date, region, service, "aws4_request"]) key = hmac(key, part ?? "");
  const expectedSignature = hmac(key, stringToSign).toString("hex");
  return expectedSignature === signature ? undefined : "the signature does not match the request";
}

function sha256Hex(data: string | Buffer): string {
  return createHash("sha256").update(data).digest("hex");
}

function hmac(key: Buffer, data: string): Buffer {
  return createHmac("sha256", key).update(data).digest();
}
