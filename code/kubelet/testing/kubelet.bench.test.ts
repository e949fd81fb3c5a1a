// The kubelet benchmark in its quick size (6 pods on 2 process-runtime kubelets, 40 pods on 4
// fake-runtime kubelets, 11 s idle windows): it runs end to end, `--json` gives one object with
// both parts' startup summaries (every pod measured, every figure positive, created → Running
// never shorter than either half) and the idle kubelets' request rate, and no process it started
// — API server, scheduler, kubelets, the fake kubelets' host, the containers — is left behind.
// Timing is not checked (performance is measured by `npm run bench -- kubelet`).
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { repoRoot, runScriptToEnd } from "../../testing/child-process.ts";

const bench = join(repoRoot, "code", "kubelet", "testing", "kubelet.bench.ts");

/** Every process whose command line names one of the benchmark's temp dirs. */
function benchProcesses(): string[] {
  const ps = execFileSync("ps", ["-eo", "pid,args"], { encoding: "utf8" });
  return ps.split("\n").filter((l) => l.includes("kubelet-bench-") && !l.includes("vitest"));
}

describe("kubelet benchmark", () => {
  it("measures pod startup on process and fake kubelets and the idle request rate, and leaves nothing running", async () => {
    const { code, stdout, stderr } = await runScriptToEnd(bench, ["--quick", "--json"]);
    expect(code, stderr).toBe(0);
    const r = JSON.parse(stdout);
    for (const [part, pods, nodes] of [
      ["process", 6, 2],
      ["fake", 40, 4],
    ] as const) {
      const p = r[part];
      expect(p.pods).toBe(pods);
      expect(p.nodes).toBe(nodes);
      for (const key of ["startup", "createToScheduled", "scheduledToRunning"]) {
        expect(p[key].n, `${part} ${key}`).toBe(pods);
        for (const q of ["p50", "p90", "p99", "max"])
          expect(p[key][q], `${part} ${key} ${q}`).toBeGreaterThan(0);
      }
      expect(p.startup.max).toBeGreaterThanOrEqual(p.createToScheduled.max);
      expect(p.startup.max).toBeGreaterThanOrEqual(p.scheduledToRunning.max);
      // Idle kubelets still renew their Leases: some requests, and only from kubelets.
      expect(p.idle.requests).toBeGreaterThan(0);
      expect(p.idle.byKind["UPDATE leases"]).toBeGreaterThan(0);
    }
    expect(r.sloP99Ms).toBe(5000);
    expect(benchProcesses()).toEqual([]);
  }, 300_000);
});
