/**
 * AWS Signature Version 4 for the function's DynamoDB calls, on node:crypto: synchronous HMACs, the derived
 * signing key kept for the day. A package would add 8 KiB of bundle (aws4, with its query-string, S3 and
 * presigning paths) or WebCrypto's first-use cost (aws4fetch) for the few lines a JSON-protocol POST needs.
 * test/lambda/sigv4.test.ts checks it against aws4 and against a verifier written from the specification.
 */
import type { KeyObject } from "node:crypto";
import { nodeCrypto } from "../node-crypto.ts";

/** Who signs the calls, and for which region. */
export interface DynamoDbIdentity {
  region: string;
  credentials: { accessKeyId: string; secretAccessKey: string; sessionToken?: string | undefined };
}

export interface RequestToSign {
  method: string;
  url: URL;
  /** Sent as given; all of them are signed, with `host`, `x-amz-date` and the session token. */
  headers: Record<string, string>;
  body: string;
  service: string;
}

const ALGORITHM = "AWS4-HMAC-SHA256";

/** The derived key of the last signature: it changes with the day, the region, the service or the secret. */
let cachedSigningKey: { scope: string; secretAccessKey: string; key: KeyObject } | undefined;

/** The headers to send: the request's own, lower-cased, plus `host`, `x-amz-date`, the session token and `authorization`. */
export function signedHeaders(
  request: RequestToSign,
  { region, credentials }: DynamoDbIdentity,
  now: Date = new Date(),
): Record<string, string> {
  const { createHash, createHmac, createSecretKey } = nodeCrypto();
  const sha256Hex = (data: string) => createHash("sha256").update(data, "utf8").digest("hex");

  const amzDate = basicFormat(now);
  const scope = `${amzDate.slice(0, 8)}/${region}/${request.service}/aws4_request`;
  const headers: Record<string, string> = { host: request.url.host, "x-amz-date": amzDate };
  for (const name in request.headers) headers[name.toLowerCase()] = request.headers[name] ?? "";
  if (credentials.sessionToken) headers["x-amz-security-token"] = credentials.sessionToken;

  const names = Object.keys(headers).sort();
  const signedHeaderNames = names.join(";");
  let canonicalHeaders = "";
  for (const name of names) canonicalHeaders += `${name}:${canonicalValue(headers[name] ?? "")}\n`;
  const canonicalRequest = [
    request.method,
    canonicalResource(request.url),
    canonicalHeaders,
    signedHeaderNames,
    sha256Hex(request.body),
  ].join("\n");
  const stringToSign = [ALGORITHM, amzDate, scope, sha256Hex(canonicalRequest)].join("\n");

  if (cachedSigningKey?.scope !== scope || cachedSigningKey.secretAccessKey !== credentials.secretAccessKey) {
    let key: Buffer = Buffer.from(`AWS4${credentials.secretAccessKey}`, "utf8");
    for (const part of scope.split("/")) key = createHmac("sha256", key).update(part, "utf8").digest();
    // As a KeyObject: node:crypto takes one at once, where it checks a Buffer key at length on every HMAC.
    cachedSigningKey = { scope, secretAccessKey: credentials.secretAccessKey, key: createSecretKey(key) };
  }
  const signature = createHmac("sha256", cachedSigningKey.key).update(stringToSign, "utf8").digest("hex");
  headers.authorization =
    `${ALGORITHM} Credential=${credentials.accessKeyId}/${scope}, ` +
    `SignedHeaders=${signedHeaderNames}, Signature=${signature}`;
  return headers;
}

/** `20261123T103045Z`, ISO 8601's basic format in seconds; formatted once a second (toISOString is dear). */
let lastDate = { second: Number.NaN, text: "" };

function basicFormat(date: Date): string {
  const second = Math.floor(date.getTime() / 1000);
  if (lastDate.second !== second)
    lastDate = { second, text: date.toISOString().replace(/[-:]|\.\d{3}/g, "") };
  return lastDate.text;
}

/** A header value as SigV4 signs it: trimmed, each run of whitespace one space (most need neither). */
function canonicalValue(value: string): string {
  return /^\s|\s$|\s\s|[^\S ]/.test(value) ? value.trim().replace(/\s+/g, " ") : value;
}

/** RFC 3986 unreserved characters stay; everything else is percent-encoded. */
function encodeRfc3986(text: string): string {
  return encodeURIComponent(text).replace(
    /[!'()*]/g,
    (char) => `%${char.charCodeAt(0).toString(16).toUpperCase()}`,
  );
}

/** A URL's canonical path and query, worked out once per URL: the function signs every call to one endpoint. */
const canonicalResources = new WeakMap<URL, string>();

function canonicalResource(url: URL): string {
  let resource = canonicalResources.get(url);
  if (resource === undefined) {
    resource = `${canonicalPath(url)}\n${canonicalQuery(url)}`;
    canonicalResources.set(url, resource);
  }
  return resource;
}

/** Every service but S3 signs the path encoded twice: URL already encoded it once. */
function canonicalPath(url: URL): string {
  return url.pathname.split("/").map(encodeRfc3986).join("/") || "/";
}

function canonicalQuery(url: URL): string {
  return [...url.searchParams]
    .map(([name, value]) => `${encodeRfc3986(name)}=${encodeRfc3986(value)}`)
    .sort()
    .join("&");
}
