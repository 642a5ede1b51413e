import { describe, expect, it } from "vitest";
import { npmRun, tempDataDir } from "./local-run.ts";

describe("npm run invoke: the bundled handler on an event file, without a server running", () => {
  it("runs the ready events against the data dir's store", async () => {
    const env = { PLANTS_DATA_DIR: await tempDataDir() };
    const invoke = async (file: string) => {
      const { stdout } = await npmRun("invoke", [`local/events/${file}`], env);
      return JSON.parse(stdout) as { statusCode: number; body: string };
    };
    const created = await invoke("create-plant.json");
    expect(created.statusCode).toBe(200);
    expect(JSON.parse(created.body)).toEqual({ name: "Fern" });
    expect((await invoke("duplicate-plant.json")).statusCode).toBe(409);
    expect((await invoke("bad-body.json")).statusCode).toBe(400);
    expect((await invoke("missing-token.json")).statusCode).toBe(401);
  });
});
