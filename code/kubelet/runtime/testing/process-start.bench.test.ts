// The process-start benchmark in its quick size (3 starts per mode, bursts of 5): it runs end to
// end and `--json` gives one object with start-latency summaries for tsx, bundle and warm starts
// and both bursts (the warm one all from the pool), every figure a positive number, and no container process left behind. Timing is not
// checked (performance is measured by `npm run bench -- process-start`).
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { repoRoot, runScriptToEnd } from "../../../testing/child-process.ts";

const bench = join(repoRoot, "code", "kubelet", "runtime", "testing", "process-start.bench.ts");

function containerProcesses(): string[] {
  const ps = execFileSync("ps", ["-eo", "pid,args"], { encoding: "utf8" });
  return ps.split("\n").filter((l) => l.includes("process-start-") && l.includes("shim"));
}

describe("process-start benchmark", () => {
  it("measures tsx and bundle starts and a burst, and leaves no container running", async () => {
    const { code, stdout, stderr } = await runScriptToEnd(bench, ["--quick", "--json"]);
    expect(code, stderr).toBe(0);
    const r = JSON.parse(stdout);
    for (const key of ["tsx", "bundle", "warm", "burst", "warmBurst"]) {
      expect(r[key].startMs.n).toBeGreaterThan(0);
      for (const p of ["p50", "p90", "p99", "max"]) expect(r[key].startMs[p]).toBeGreaterThan(0);
    }
    expect(r.burst.startMs.n).toBe(5);
    expect(r.warmBurst.warmStarts).toBe(5);
    expect(containerProcesses()).toEqual([]);
  }, 120_000);
});
