import { AwsV4Signer } from "aws4fetch";
import { afterEach, describe, expect, it, vi } from "vitest";
import { SigningHeaders } from "../../lambda/transport/signing-headers.ts";

// dynalite does not check signatures, so the shim the bundle signs with is compared here with the
// Fetch API's Headers that aws4fetch is written against: the same request must get the same signature.
async function sign(sessionToken?: string): Promise<Record<string, string>> {
  const signer = new AwsV4Signer({
    method: "POST",
    url: "https://dynamodb.eu-west-1.amazonaws.com/",
    headers: { "Content-Type": "application/x-amz-json-1.0", "X-Amz-Target": "DynamoDB_20120810.PutItem" },
    body: '{"TableName":"plants"}',
    accessKeyId: "AKIDEXAMPLE",
    secretAccessKey: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
    ...(sessionToken === undefined ? {} : { sessionToken }),
    service: "dynamodb",
    region: "eu-west-1",
    datetime: "20261122T103000Z",
  });
  const { headers } = await signer.sign();
  return Object.fromEntries(headers);
}

afterEach(() => {
  vi.unstubAllGlobals();
});

describe("SigningHeaders", () => {
  it.each([undefined, "session-token"])(
    "gives aws4fetch's signer the signature it makes with Headers (token %s)",
    async (token) => {
      const withFetchHeaders = await sign(token);
      vi.stubGlobal("Headers", SigningHeaders);
      const withShim = await sign(token);
      expect(withShim).toEqual(withFetchHeaders);
      expect(withShim.authorization).toMatch(
        /^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE\/20261122\/eu-west-1\/dynamodb\/aws4_request, /,
      );
    },
  );

  it("treats names case-insensitively and lists them lower-cased and sorted, like Headers", () => {
    const headers = new SigningHeaders({ "X-B": "2", a: "1" });
    headers.set("x-c", "3");
    headers.delete("X-C");
    expect(headers.get("x-b")).toBe("2");
    expect(headers.has("A")).toBe(true);
    expect(headers.get("missing")).toBeNull();
    expect([...headers.keys()]).toEqual(["a", "x-b"]);
    expect([...headers]).toEqual([...new Headers({ "X-B": "2", a: "1" })]);
  });
});
