/**
 * `npm run traces` (local/traces.ts) prints what anyone sends to its UDP port: a datagram's control
 * characters are printed as escapes, never raw, so that none can move the cursor, clear the screen or
 * forge a line of its own in the terminal.
 */
import { createSocket } from "node:dgram";
import { expect, it } from "vitest";
import { DAEMON_HEADER } from "../../lambda/tracing/daemon-client.ts";
import { freePort } from "../support/free-port.ts";
import { startCommand } from "../support/local-run.ts";

it("escapes the control characters of every datagram it prints, read or unreadable", async () => {
  const address = `127.0.0.1:${await freePort()}`;
  const printer = startCommand(process.execPath, ["--import", "tsx", "local/traces.ts"], {
    AWS_XRAY_DAEMON_ADDRESS: address,
  });
  const socket = createSocket("udp4");
  try {
    await until(() => printer.output().includes(`printing the subsegments sent to udp ${address}`));
    const forged = "\n12:00:00.000 1-forged DynamoDB PutItem plants 200";
    const document = {
      name: `DynamoDB\u001b[2J${forged}`,
      namespace: "aws",
      trace_id: "1-6740b1d2-5c3a0e6f1b2d3c4e5f607182",
      aws: { operation: "PutItem\u202e", table_name: "plants\r" },
      http: { response: { status: 200 } },
    };
    const [host, port] = address.split(":");
    const send = (text: string) => socket.send(text, Number(port), host);
    send(`${DAEMON_HEADER}${JSON.stringify(document)}`);
    send(`no header\u0007\u009b31m${forged}`);
    send(`${DAEMON_HEADER}{not json\u001b]0;title\u0007`);
    await until(() => printer.output().split("\n").length >= 5);
    const printed = printer.output().split("\n").slice(1, 4);
    expect(printed).toEqual([
      "? 1-6740b1d2-5c3a0e6f1b2d3c4e5f607182 DynamoDB\\x1b[2J\\x0a12:00:00.000 1-forged DynamoDB PutItem plants 200 PutItem\\u202e plants\\x0d 200",
      "(not a segment document) no header\\x07\\x9b31m\\x0a12:00:00.000 1-forged DynamoDB PutItem plants 200",
      `(unreadable) ${DAEMON_HEADER.replace("\n", "\\x0a")}{not json\\x1b]0;title\\x07`,
    ]);
    // Nothing raw anywhere in its output: no control character but the line breaks it writes itself.
    expect(printer.output().replaceAll("\n", "")).not.toMatch(/[\p{Cc}\u202e]/u);
  } finally {
    socket.close();
    printer.child.kill("SIGTERM");
    await printer.exited;
  }
});

/** Resolves once `condition` holds, checked on every turn of the event loop (the test's timeout bounds it). */
async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 10));
}
