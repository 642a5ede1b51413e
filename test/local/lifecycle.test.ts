/**
 * `npm start` as a server: it answers nothing until it is ready (and then never "starting"), stops on
 * SIGTERM or SIGINT sent to npm's own pid. Real processes, real signals, real HTTP.
 */
import { execFile } from "node:child_process";
import { access, readFile } from "node:fs/promises";
import { connect, createServer } from "node:net";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { mintLocalToken } from "../../local/local-issuer.ts";
import { freePort } from "../support/free-port.ts";

const REPO_ROOT = fileURLToPath(new URL("../../", import.meta.url));

import { type Command, startCommand, startServer, tempDataDir, waitForBanner } from "../support/local-run.ts";

/** Generous: stopping takes well under a second; a server that does not stop at all fails the test. */
const STOP_BOUND_MS = 10_000;

function portIsOpen(url: string): Promise<boolean> {
  const { port } = new URL(url);
  return new Promise((resolve) => {
    const socket = connect({ host: "127.0.0.1", port: Number(port) });
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}

async function exitWithin(command: Command, ms: number): Promise<number | null | "still running"> {
  return Promise.race([command.exited, sleep(ms).then(() => "still running" as const)]);
}

async function exists(path: string): Promise<boolean> {
  return access(path).then(
    () => true,
    () => false,
  );
}

describe("npm start, starting", () => {
  it("refuses no request while it starts, and prints its banner before any request's line", async () => {
    const dataDir = await tempDataDir();
    const token = await mintLocalToken(dataDir);
    const port = await freePort();
    const command = startCommand("npm", ["start"], { PLANTS_DATA_DIR: dataDir, PORT: String(port) });
    const post = (id: number) =>
      fetch(`http://127.0.0.1:${port}/plants`, {
        method: "POST",
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        body: JSON.stringify({ id, name: "Fern" }),
      });

    // Knocks from the moment it is started: a refused connection is fine, a "starting" answer is not.
    const statuses: number[] = [];
    for (let id = 1; statuses.length === 0; id++) {
      if (command.child.exitCode !== null) throw new Error(`npm start exited:\n${command.output()}`);
      await post(id).then(
        (response) => statuses.push(response.status),
        () => sleep(10),
      );
    }
    statuses.push(...(await Promise.all([101, 102, 103].map(post))).map((response) => response.status));
    expect(statuses).toEqual([200, 200, 200, 200]);

    await waitForBanner(command);
    const output = command.output();
    expect(output.indexOf("Plant Store API at")).toBeLessThan(output.indexOf('"status":200'));
    process.kill(command.child.pid ?? 0, "SIGTERM");
    expect(await exitWithin(command, STOP_BOUND_MS)).toBe(0);
  });
});

describe("npm start's banner", () => {
  it("names the app client and where its secret is kept, but never prints the secret", async () => {
    const dataDir = await tempDataDir();
    const server = await startServer({ PLANTS_DATA_DIR: dataDir });
    try {
      const { clientId, clientSecret } = JSON.parse(await readFile(join(dataDir, "client.json"), "utf8")) as {
        clientId: string;
        clientSecret: string;
      };
      expect(server.output()).toContain(
        `client: id ${clientId}; its secret is in ${join(dataDir, "client.json")}`,
      );
      expect(server.output()).not.toContain(clientSecret);
    } finally {
      await server.stop();
    }
  });

  it("prints a token command that works pasted into a shell, on a data dir with a space and a quote", async () => {
    const dataDir = join(await tempDataDir(), "plants' data dir");
    const server = await startServer({ PLANTS_DATA_DIR: dataDir });
    try {
      const line = /token: +(.*npm run --silent token)/.exec(server.output())?.[1];
      expect(line).toContain("PLANTS_DATA_DIR=");
      const { stdout } = await promisify(execFile)("bash", ["-c", line ?? ""], { cwd: REPO_ROOT });
      expect(stdout.trim()).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+$/);
    } finally {
      await server.stop();
    }
  });
});

describe("npm start, stopping", () => {
  for (const signal of ["SIGTERM", "SIGINT"] as const) {
    it(`stops on ${signal} sent to npm's own pid: port freed, server.json removed, no process left`, async () => {
      const dataDir = await tempDataDir();
      const server = await startServer({ PLANTS_DATA_DIR: dataDir }, { viaNpm: true });
      expect(await exists(join(dataDir, "server.json"))).toBe(true);

      process.kill(server.child.pid ?? 0, signal); // npm's pid alone, as `kill <pid>` does
      expect(await exitWithin(server, STOP_BOUND_MS)).toBe(0);
      for (let waited = 0; server.anyProcessLeft() && waited < STOP_BOUND_MS; waited += 50) await sleep(50);
      expect(server.anyProcessLeft()).toBe(false);
      expect(await portIsOpen(server.url)).toBe(false);
      expect(await exists(join(dataDir, "server.json"))).toBe(false);
      expect(server.output()).toContain(`${signal}: stopping`);
    });
  }
});

/** What `npm start` itself printed: without npm's header (`> plant-store start`) and npm's own warnings. */
function ownLines(command: Command): string[] {
  return command
    .output()
    .split("\n")
    .filter((line) => line.trim() !== "" && !line.startsWith(">") && !line.startsWith("npm warn"));
}

describe("npm start, refusing a setting in one line that names it", () => {
  it("names PORT when the port is in use, and exits 1", async () => {
    const holder = createServer();
    await new Promise<void>((resolve) => holder.listen(0, "127.0.0.1", resolve));
    try {
      const { port } = holder.address() as { port: number };
      const command = startCommand("npm", ["start"], {
        PLANTS_DATA_DIR: await tempDataDir(),
        PORT: String(port),
      });
      expect(await command.exited).toBe(1);
      expect(ownLines(command)).toEqual([
        `npm start failed: port ${port} is in use (set PORT to another port)`,
      ]);
    } finally {
      await new Promise((resolve) => holder.close(resolve));
    }
  });

  it.each([
    [
      "AWS_ENDPOINT_URL_DYNAMODB",
      "notaurl",
      "AWS_ENDPOINT_URL_DYNAMODB must be a URL (http:// or https://): 'notaurl'",
    ],
    ["PORT", "http", "PORT must be a port number (0 picks a free one), got 'http'"],
    [
      "PLANTS_TABLE",
      "a",
      "PLANTS_TABLE must be a DynamoDB table name (3 to 255 letters, digits, _ - .): 'a'",
    ],
  ])("names %s=%j", async (name, value, message) => {
    const command = startCommand("npm", ["start"], { PLANTS_DATA_DIR: await tempDataDir(), [name]: value });
    expect(await command.exited).toBe(1);
    expect(ownLines(command)).toEqual([`npm start failed: ${message}`]);
  });
});
