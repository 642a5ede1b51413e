import { startHarness } from "./support/harness.ts";
import { apiGatewayEvent } from "./support/events.ts";
const harness = await startHarness({ JWKS_JSON: "" });
const token = await harness.issuer.mint();
const write = process.stdout.write;
process.stdout.write = (() => true) as typeof process.stdout.write;
let id = Date.now() * 1000;
const template = apiGatewayEvent("2.0", { token });
for (let i = 0; i < 3000; i++) {
  const r = await harness.handler({ ...template, body: `{"id":${id++},"name":"Fern","tag":"bench"}` });
  if (r.statusCode !== 200) throw new Error(r.body);
}
const { Session } = await import("node:inspector/promises");
const session = new Session(); session.connect();
await session.post("Profiler.enable"); await session.post("Profiler.setSamplingInterval", { interval: 20 });
await session.post("Profiler.start");
const cpu0 = process.cpuUsage();
for (let i = 0; i < 5000; i++) {
  const r = await harness.handler({ ...template, body: `{"id":${id++},"name":"Fern","tag":"bench"}` });
  if (r.statusCode !== 200) throw new Error(r.body);
}
const cpu = process.cpuUsage(cpu0);
const { profile } = await session.post("Profiler.stop");
process.stdout.write = write;
const fs = await import("node:fs");
fs.writeFileSync("/tmp/handler.cpuprofile", JSON.stringify(profile));
console.log("cpu per create µs", (cpu.user + cpu.system) / 5000);
await harness.close();
process.exit(0);
