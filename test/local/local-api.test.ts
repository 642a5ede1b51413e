import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { type LocalApi, startLocalApi } from "../../local/local-api.ts";
import { mintLocalToken } from "../../local/local-issuer.ts";
import { apiGatewayEvent } from "../../support/events.ts";
import { freePort } from "../support/free-port.ts";
import { tempDataDir } from "../support/local-run.ts";

function post(api: LocalApi, token: string, body: object) {
  return fetch(`${api.url}/plants`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
}

describe("startLocalApi, in-process (as the benchmark uses it)", () => {
  it("restarts in the same process with a fresh handler instance, on its own key set URL", async () => {
    const dataDir = await tempDataDir();
    const token = await mintLocalToken(dataDir);

    const first = await startLocalApi({ port: 0, dataDir, log: () => {} });
    expect((await post(first, token, { id: 10, name: "Fern" })).status).toBe(200);
    await first.close();

    // The first instance's key set URL is gone with its port: the second must have its own.
    const second = await startLocalApi({ port: 0, dataDir, log: () => {} });
    try {
      expect((await post(second, token, { id: 10, name: "Ivy" })).status).toBe(409);
      expect((await post(second, token, { id: 11, name: "Ivy" })).status).toBe(200);
    } finally {
      await second.close();
    }
  });

  it("unannounced, as npm run invoke's own, leaves server.json unwritten and client.json as it was", async () => {
    const dataDir = await tempDataDir();
    const announced = await startLocalApi({ port: 0, dataDir, log: () => {} });
    const savedClient = await readFile(join(dataDir, "client.json"), "utf8");
    await announced.close();

    const quiet = await startLocalApi({ port: 0, dataDir, log: () => {}, announce: false });
    try {
      await expect(readFile(join(dataDir, "server.json"), "utf8")).rejects.toThrow(/ENOENT/);
      expect(await readFile(join(dataDir, "client.json"), "utf8")).toBe(savedClient);
      expect(
        (await quiet.invoke(apiGatewayEvent("2.0", { token: await mintLocalToken(dataDir) }))).statusCode,
      ).toBe(200);
    } finally {
      await quiet.close();
    }
  });

  it("starts two at once, each with its own configuration, and never touches process.env", async () => {
    const environmentBefore = { ...process.env };
    const changes: string[] = [];
    // Watches process.env on every turn of the event loop while both start.
    let watching = true;
    const watch = () => {
      for (const name of ["TABLE_NAME", "JWKS_URL", "JWT_ISSUER"]) {
        if (process.env[name] !== environmentBefore[name]) changes.push(name);
      }
      if (watching) setImmediate(watch);
    };
    watch();
    const dataDirs = [await tempDataDir(), await tempDataDir()];
    const apis = await Promise.all(
      dataDirs.map((dataDir, index) =>
        startLocalApi({ port: 0, dataDir, tableName: `plants-${index}`, log: () => {} }),
      ),
    );
    watching = false;
    try {
      expect(changes).toEqual([]);
      expect(apis.map((api) => api.store.tableName)).toEqual(["plants-0", "plants-1"]);
      for (const [index, api] of apis.entries()) {
        const token = await mintLocalToken(dataDirs[index] ?? "");
        expect((await post(api, token, { id: 1, name: `Fern ${index}` })).status).toBe(200);
      }
      // Each instance trusts its own data dir's key only: the key sets were not mixed up.
      const otherToken = await mintLocalToken(dataDirs[1] ?? "");
      expect((await post(apis[0] as LocalApi, otherToken, { id: 2, name: "Ivy" })).status).toBe(401);
    } finally {
      await Promise.all(apis.map((api) => api.close()));
    }
    expect(process.env).toEqual(environmentBefore);
  });

  it("has written server.json and client.json, naming its port, before it answers anything", async () => {
    const dataDir = await tempDataDir();
    const port = await freePort();
    const starting = startLocalApi({ port, dataDir, log: () => {} });
    // A tool that polls the port and reads the files at its first 200 must find both. The key set answers
    // without the handler, the earliest answer there is; polled from this process, the poll runs between
    // the start's own steps, where a file written after the port opened would not be there yet.
    let answered = false;
    while (!answered) {
      answered = await fetch(`http://127.0.0.1:${port}/.well-known/jwks.json`).then(
        (response) => response.status === 200,
        () => false,
      );
    }
    const [record, client] = await Promise.all(
      ["server.json", "client.json"].map((name) =>
        readFile(join(dataDir, name), "utf8").then(JSON.parse, (error: Error) => error.message),
      ),
    );
    await (await starting).close();
    expect(record).toMatchObject({ url: `http://127.0.0.1:${port}` });
    expect(client).toMatchObject({ tokenUrl: `http://127.0.0.1:${port}/oauth2/token` });
  });

  it("refuses a second start on a data dir this process already serves", async () => {
    const dataDir = await tempDataDir();
    const api = await startLocalApi({ port: 0, dataDir, log: () => {} });
    try {
      await expect(startLocalApi({ port: 0, dataDir, log: () => {} })).rejects.toThrow(
        /cannot be opened: .*lock/i,
      );
    } finally {
      await api.close();
    }
  });
});
