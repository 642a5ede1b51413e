import { describe, expect, it } from "vitest";
import { startLocalApi } from "../../local/local-api.ts";
import { mintLocalToken } from "../../local/local-issuer.ts";
import { tempDataDir } from "./local-run.ts";

describe("startLocalApi, in-process (as the benchmark uses it)", () => {
  it("restarts in the same process with a fresh handler instance, leaving process.env as it was", async () => {
    const dataDir = await tempDataDir();
    const environmentBefore = { ...process.env };
    const token = await mintLocalToken(dataDir);
    const post = (url: string, body: object) =>
      fetch(`${url}/plants`, {
        method: "POST",
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        body: JSON.stringify(body),
      });

    const first = await startLocalApi({ port: 0, dataDir, log: () => {} });
    expect((await post(first.url, { id: 10, name: "Fern" })).status).toBe(200);
    await first.close();

    // The first instance's key set URL is gone with its port: the second must have its own.
    const second = await startLocalApi({ port: 0, dataDir, log: () => {} });
    try {
      expect((await post(second.url, { id: 10, name: "Ivy" })).status).toBe(409);
      expect((await post(second.url, { id: 11, name: "Ivy" })).status).toBe(200);
    } finally {
      await second.close();
    }
    expect(process.env).toEqual(environmentBefore);
  });
});
