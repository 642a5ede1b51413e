/**
 * The local run's traces: `npm start` with AWS_XRAY_DAEMON_ADDRESS samples every request, so the bundled
 * handler sends its subsegments there; `npm run traces` prints each one on a line.
 */
import { createSocket } from "node:dgram";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DAEMON_HEADER } from "../../lambda/tracing/daemon-client.ts";
import { mintLocalToken } from "../../local/local-issuer.ts";
import { describeSubsegment } from "../../local/traces.ts";
import { freePort } from "../support/free-port.ts";
import { type RunningServer, startCommand, startServer, tempDataDir } from "../support/local-run.ts";
import { type FakeXRayDaemon, type SegmentDocument, startFakeXRayDaemon } from "../support/xray-daemon.ts";

describe("npm start with AWS_XRAY_DAEMON_ADDRESS", () => {
  let daemon: FakeXRayDaemon;
  let server: RunningServer;
  let dataDir: string;

  beforeAll(async () => {
    daemon = await startFakeXRayDaemon();
    dataDir = await tempDataDir();
    server = await startServer({ PLANTS_DATA_DIR: dataDir, AWS_XRAY_DAEMON_ADDRESS: daemon.address });
  });

  afterAll(async () => {
    await server?.stop();
    await daemon?.close();
  });

  it("says so, and sends each request's subsegments there, one trace per request", async () => {
    expect(server.output()).toContain(
      `subsegments sent to udp ${daemon.address} (print them: npm run traces)`,
    );
    const token = await mintLocalToken(dataDir);
    const post = (id: number) =>
      fetch(`${server.url}/plants`, {
        method: "POST",
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        body: JSON.stringify({ id, name: "Fern" }),
      });
    expect((await post(1)).status).toBe(200);
    expect((await post(1)).status).toBe(200);

    // Two requests: the first's store call; the replay's two store calls. The key set, fetched before the
    // first request or after its answer, belongs to no request's trace.
    await until(() => daemon.documents().length >= 3);
    const firstTrace = daemon.documents()[0]?.trace_id;
    const first = daemon.documents().filter((document) => document.trace_id === firstTrace);
    const replay = daemon.documents().filter((document) => document.trace_id !== firstTrace);
    expect(sortedLines(first)).toEqual([
      expect.stringMatching(/ DynamoDB PutItem plants 200 retries=0 [\d.]+ ms$/),
    ]);
    // A replay: the conditional PutItem fails (dynalite ignores ALL_OLD), the GetItem reads the plant.
    expect(new Set(replay.map((document) => document.trace_id)).size).toBe(1);
    expect(sortedLines(replay)).toEqual([
      expect.stringMatching(/ DynamoDB GetItem plants 200 retries=0 /),
      expect.stringMatching(/ DynamoDB PutItem plants 400 error ConditionalCheckFailedException retries=0 /),
    ]);
  });
});

/** Each document's line, sorted (after its time) by what was called: the order of the calls is not checked. */
function sortedLines(documents: SegmentDocument[]): string[] {
  const withoutTime = (line: string) => line.slice(line.indexOf(" "));
  return documents.map(describeSubsegment).sort((a, b) => withoutTime(a).localeCompare(withoutTime(b)));
}

describe("npm run traces", () => {
  it("prints each subsegment sent to its port on one line", async () => {
    const address = `127.0.0.1:${await freePort()}`;
    const printer = startCommand(process.execPath, ["--import", "tsx", "local/traces.ts"], {
      AWS_XRAY_DAEMON_ADDRESS: address,
    });
    try {
      await until(() => printer.output().includes(`printing the subsegments sent to udp ${address}`));
      const document = {
        type: "subsegment",
        name: "DynamoDB",
        namespace: "aws",
        trace_id: "1-6740b1d2-5c3a0e6f1b2d3c4e5f607182",
        start_time: 1_764_000_000.1,
        end_time: 1_764_000_000.1031,
        aws: { operation: "PutItem", table_name: "plants", retries: 1 },
        http: { response: { status: 400 } },
        error: true,
        throttle: true,
        cause: { exceptions: [{ type: "ThrottlingException" }] },
      };
      const socket = createSocket("udp4");
      const [host, port] = address.split(":");
      socket.send(`${DAEMON_HEADER}${JSON.stringify(document)}`, Number(port), host);
      await until(() => printer.output().includes("ThrottlingException"));
      socket.close();
      expect(printer.output()).toContain(
        "16:00:00.100 1-6740b1d2-5c3a0e6f1b2d3c4e5f607182 DynamoDB PutItem plants 400 error throttle ThrottlingException retries=1 3.1 ms",
      );
    } finally {
      printer.child.kill("SIGTERM");
      await printer.exited;
    }
  });
});

/** Resolves once `condition` holds, checked on every turn of the event loop (the test's timeout bounds it). */
async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 10));
}
