import { describe, expect, it } from "vitest";
import { isTraced, parseDaemonAddress, parseTraceHeader } from "../../lambda/tracing/trace-header.ts";

const ROOT = "1-5759e988-bd862e3fe1be46a994272793";

describe("the trace header Lambda gives an invocation", () => {
  it("reads Root, Parent and Sampled in any order, with Lineage or other fields beside them", () => {
    expect(parseTraceHeader(`Root=${ROOT};Parent=53995c3f42cd8ad8;Sampled=1`)).toEqual({
      root: ROOT,
      parent: "53995c3f42cd8ad8",
      sampled: true,
    });
    expect(
      parseTraceHeader(`Sampled=1;Lineage=a87bd80c:1|68fd508a:5;Parent=53995c3f42cd8ad8;Root=${ROOT}`),
    ).toEqual({ root: ROOT, parent: "53995c3f42cd8ad8", sampled: true });
  });

  it("traces only a sampled invocation whose parent segment is named", () => {
    expect(isTraced(parseTraceHeader(`Root=${ROOT};Parent=53995c3f42cd8ad8;Sampled=1`))).toBe(true);
    expect(isTraced(parseTraceHeader(`Root=${ROOT};Parent=53995c3f42cd8ad8;Sampled=0`))).toBe(false);
    expect(isTraced(parseTraceHeader(`Root=${ROOT};Parent=53995c3f42cd8ad8;Sampled=?`))).toBe(false);
    expect(isTraced(parseTraceHeader(`Root=${ROOT};Sampled=1`))).toBe(false);
    expect(isTraced(parseTraceHeader(`Root=${ROOT};Parent=not-a-segment-id;Sampled=1`))).toBe(false);
  });

  it("has nothing to log or trace without a well-formed Root", () => {
    for (const header of [undefined, "", "Parent=53995c3f42cd8ad8;Sampled=1", "Root=1-xyz;Sampled=1", ROOT]) {
      expect(parseTraceHeader(header)).toBeUndefined();
    }
  });
});

describe("AWS_XRAY_DAEMON_ADDRESS", () => {
  it("is host:port, or the UDP one of 'tcp:… udp:…'", () => {
    expect(parseDaemonAddress("169.254.79.129:2000")).toEqual({ host: "169.254.79.129", port: 2000 });
    expect(parseDaemonAddress(" localhost:2000 ")).toEqual({ host: "localhost", port: 2000 });
    expect(parseDaemonAddress("[::1]:2000")).toEqual({ host: "::1", port: 2000 });
    expect(parseDaemonAddress("tcp:127.0.0.1:2000 udp:127.0.0.2:2001")).toEqual({
      host: "127.0.0.2",
      port: 2001,
    });
  });

  it("is refused otherwise", () => {
    for (const value of ["", "2000", "localhost", "localhost:0", "localhost:65536", "a:1 b:2", "::1:2000"]) {
      expect(parseDaemonAddress(value), value).toBeUndefined();
    }
  });
});
