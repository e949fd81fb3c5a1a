// The cluster benchmark in its quick size (5 hollow nodes: 10 then 40 pods, a Deployment scaled
// 0 → 20; 10 hollow nodes and 60 pods for the memory part): it runs end to end, `--json` gives
// one object with every pod measured and every component's resident memory, kubemark stops on
// SIGTERM with exit 0, and no process it started — etcd, the control plane, kubemark — is left
// behind. Timing is not checked (performance is measured by `npm run bench -- cluster`).
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { repoRoot, runScriptToEnd } from "../../testing/child-process.ts";

const bench = join(repoRoot, "code", "cmd", "testing", "cluster.bench.ts");

describe("cluster benchmark", () => {
  it("measures startup latency, a scale-up and every component's memory through separate processes, and leaves nothing running", async () => {
    const { code, stdout, stderr } = await runScriptToEnd(bench, ["--quick", "--json"]);
    expect(code, stderr).toBe(0);
    const r = JSON.parse(stdout);
    expect(r.latency.nodes).toBe(5);
    for (const [part, pods] of [
      ["small", 10],
      ["large", 40],
    ] as const) {
      expect(r.latency[part].pods).toBe(pods);
      expect(r.latency[part].startup.n).toBe(pods);
      expect(r.latency[part].startup.p50).toBeGreaterThan(0);
      expect(r.latency[part].cpuSeconds["kube-apiserver"]).toBeGreaterThan(0);
    }
    const s = r.latency.scaleUp;
    expect(s.replicas).toBe(20);
    expect(s.podCreatedToReady.n).toBe(20);
    expect(s.scaleToPodReady.max).toBeGreaterThanOrEqual(s.podCreatedToReady.max);
    expect(s.deploymentReadySeconds).toBeGreaterThanOrEqual(s.allPodsReadySeconds);
    expect(r.latency.kubemarkExit).toBe(0);
    expect(r.memory.startup.startup.n).toBe(60);
    for (const name of ["etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kubemark"]) {
      expect(r.memory.withPods[name].rssMiB, name).toBeGreaterThan(0);
      expect(r.memory.withPods[name].peakMiB, name).toBeGreaterThanOrEqual(r.memory.withPods[name].rssMiB);
    }
    expect(r.memory.kubemarkExit).toBe(0);
    // Every component process the benchmark started (etcd, the control plane, kubemark) is gone.
    for (const pid of Object.values({ ...r.latency.pids, ...r.memory.pids }) as number[])
      expect(() => process.kill(pid, 0), `pid ${pid}`).toThrow();
  }, 600_000);
});
