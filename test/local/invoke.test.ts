import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { npmRun, tempDataDir } from "../support/local-run.ts";

describe("npm run invoke: the bundled handler on event files, without a server running", () => {
  it("runs several events in order against the data dir's store, one result each, and warns of nothing", async () => {
    const env = { PLANTS_DATA_DIR: await tempDataDir() };
    const files = ["create-plant.json", "duplicate-plant.json", "bad-body.json", "missing-token.json"];
    const { stdout, stderr } = await npmRun(
      "invoke",
      files.map((file) => `local/events/${file}`),
      env,
    );
    // One pretty-printed result per event: each starts with a `{` at the start of a line, and the output
    // ends with a newline, so that a shell prompt or a log line after it starts on a line of its own.
    expect(stdout).toMatch(/\n$/);
    const results = stdout
      .split(/\n(?=\{)/)
      .map((text) => JSON.parse(text) as { statusCode: number; body: string });
    expect(results.map((result) => result.statusCode)).toEqual([200, 409, 400, 401]);
    expect(JSON.parse(results[0]?.body ?? "")).toEqual({ name: "Fern" });
    // The handler confirms its delivered key set with a fetch after its first answer, while invoke ends:
    // its log lines (on stderr) are the requests' lines alone.
    expect(stderr).toContain('"level":"INFO"');
    expect(stderr).not.toMatch(/"level":"(WARN|ERROR)"/);
  });

  it("prints its usage, taking several files, when given none", async () => {
    const failure = await npmRun("invoke", [], {}).catch((error: { code: number; stderr: string }) => error);
    expect(failure).toMatchObject({ code: 1, stderr: expect.stringContaining("<event.json>...") });
  });

  it("names a file that cannot be read or is no event, in one line, and runs no event", async () => {
    const dataDir = await tempDataDir();
    const notAnObject = join(dataDir, "list.json");
    await writeFile(notAnObject, "[]");
    for (const [file, why] of [
      [dataDir, `cannot read ${dataDir}: EISDIR`],
      [notAnObject, `${notAnObject} is not an event: an API Gateway event is a JSON object`],
    ] as const) {
      const failure = await npmRun("invoke", ["local/events/create-plant.json", file], {
        PLANTS_DATA_DIR: dataDir,
      }).catch((error: { code: number; stdout: string; stderr: string }) => error);
      expect(failure).toMatchObject({ code: 1, stdout: "" });
      expect((failure as { stderr: string }).stderr).toContain(`npm run invoke failed: ${why}`);
    }
  });
});
