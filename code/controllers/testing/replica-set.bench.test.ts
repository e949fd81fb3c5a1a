// The ReplicaSet controller benchmark in a tiny size (3 ReplicaSets × 4 replicas, burst 5 so the
// limiter's floor is not zero): it runs end to end against a kube-apiserver and a
// kube-controller-manager child, prints its table and the floor line, and `--json` prints one
// object whose counts match the sizes asked (every pod created once, one Event per pod) and whose
// floors are the arithmetic the header states. Timing is not checked here (performance is measured
// by `npm run bench -- informer`, never in tests).
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { runScriptToEnd } from "../../testing/child-process.ts";

const root = fileURLToPath(new URL("../../..", import.meta.url));
const bench = join(root, "code", "controllers", "testing", "replica-set.bench.ts");
const tiny = ["--quick", "--replicasets", "3", "--replicas", "4", "--qps", "20", "--burst", "5"];

const run = (args: string[]) => runScriptToEnd(bench, args);

interface Run {
  label: string;
  qps: number;
  burst: number;
  podsMs: number;
  statusMs: number;
  requests: { podCreates: number; statusWrites: number; events: number };
  minimumFloorMs: number;
  countedFloorMs: number;
}

describe("replica-set.bench.ts in quick mode", () => {
  it("prints its table and floor line, and --json the counts and floors asked", async () => {
    const [text, json] = await Promise.all([run(tiny), run([...tiny, "--json"])]);

    expect(text.code, text.stderr).toBe(0);
    expect(text.stderr).toContain("… qps 20 / burst 5: 3 ReplicaSets × 4 replicas");
    expect(text.stderr).toContain("… raised: qps 10000 / burst 10000: 3 ReplicaSets × 4 replicas");
    expect(text.stdout).toContain("ReplicaSet controller benchmark — 3 ReplicaSets × 4 replicas");
    expect(text.stdout).toMatch(/all 12 pods created: s\s+[\d.,]+\s+[\d.,]+/);
    expect(text.stdout).toMatch(/every status\.replicas = 4: s\s+[\d.,]+\s+[\d.,]+/);
    // (12 creates + 3 status writes − burst 5) / 20 qps = 0.5 s; raised: 0.
    expect(text.stdout).toMatch(/QPS floor, minimum \(12 creates \+ 3 status writes\): s\s+0\.5\s+0\.0/);
    expect(text.stdout).toMatch(
      /requests counted: creates \/ status writes \/ Events\s+12 \/ \d+ \/ 12\s+12 \/ \d+ \/ 12/,
    );
    expect(text.stdout).toContain("12 creates + 3 status writes cannot finish under 0.5 s");

    expect(json.code, json.stderr).toBe(0);
    const out = JSON.parse(json.stdout) as {
      options: { replicaSets: number; replicas: number };
      runs: Run[];
    };
    expect(out.options).toMatchObject({ replicaSets: 3, replicas: 4 });
    expect(out.runs.map((r) => [r.qps, r.burst])).toEqual([
      [20, 5],
      [10000, 10000],
    ]);
    for (const r of out.runs) {
      expect(r.requests.podCreates).toBe(12);
      expect(r.requests.events).toBe(12);
      // At least the last write of each ReplicaSet, the one that set status.replicas to 4.
      expect(r.requests.statusWrites).toBeGreaterThanOrEqual(3);
      const floor = (n: number) => (Math.max(0, n - r.burst) / r.qps) * 1000;
      expect(r.minimumFloorMs).toBeCloseTo(floor(15), 6);
      expect(r.countedFloorMs).toBeCloseTo(floor(24 + r.requests.statusWrites), 6);
    }
  }, 240_000);
});
