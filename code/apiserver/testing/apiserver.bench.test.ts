// The API server benchmark in a tiny size: it runs end to end, prints its table, SLO verdicts and
// watch check, and `--json` prints one JSON object whose figures are consistent with the sizes asked.
// The secured target (HTTPS, x509, RBAC, admission) runs too: its ratios against the insecure run
// and its per-stage lines are printed (their shape is checked, never their values).
// Timing is not checked here (performance is measured by `npm run bench -- apiserver`, never in tests).
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { runScriptToEnd } from "../../testing/child-process.ts";

const root = fileURLToPath(new URL("../../..", import.meta.url));
const bench = join(root, "code", "apiserver", "testing", "apiserver.bench.ts");
const tiny = [
  "--quick",
  "--no-etcd",
  ...["--pods", "12", "--namespaces", "2", "--creates1", "3", "--clients", "4"],
  ...["--lists", "2", "--gets", "3", "--watchers", "3", "--churn", "8", "--writers", "2"],
  ...["--rolebindings", "20"],
];

const run = (args: string[]) => runScriptToEnd(bench, args);

describe("apiserver.bench.ts in quick mode", () => {
  it("prints its figures, the cacher ratios and the SLO verdicts, and --json one object", async () => {
    const [text, json] = await Promise.all([run(tiny), run([...tiny, "--json"])]);

    expect(text.stderr).toContain("… cache: opening 3 watches");
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toContain("12 pods in 2 namespaces, 3 watchers × 8 writes");
    expect(text.stdout).toMatch(/create, 1 client, 3 pods: pods\/s\s+[\d,]+\s+[\d,]+/);
    expect(text.stdout).toMatch(/list all 12 pods, RV=0: p50 \/ p99 ms\s+[\d.,]+ \/ [\d.,]+/);
    expect(text.stdout).toContain("what the watch cache buys");
    expect(text.stdout).toMatch(/namespace list p99 ≤ 5 s\s+(PASS|FAIL) \(\d+ ms\)/);
    expect(text.stdout).toMatch(/server CPU ms per 1,000 events delivered\s+[\d.,]+\s+[\d.,]+/);
    expect(text.stdout).toContain("every watcher received every event, once");
    expect(text.stdout).toContain("with 20 RoleBindings over 3 namespaces");
    expect(text.stdout).toMatch(
      /identity: User "bench-loadgen" .*RoleBinding bench-loadgen-edit.*ClusterRoleBinding/,
    );
    expect(text.stdout).toMatch(/create, 4 clients: pods\/s\s+[\d.,]+×\s+(PASS|FAIL)/);
    expect(text.stdout).toMatch(/watch fan-out: events\/s delivered\s+[\d.,]+×\s+(PASS|FAIL)/);
    expect(text.stdout).toMatch(/secured mutating p99 ≤ 1 s \(SLO\)\s+[\d,]+ ms\s+(PASS|FAIL)/);
    for (const phase of ["create (4 clients)", "lists and gets", "watch churn (writes)"])
      for (const stage of ["authn", "authz", "admission"])
        expect(text.stdout).toMatch(
          new RegExp(
            `stage ${stage} \\(${phase.replace(/[()]/g, "\\$&")}\\): [\\d.,]+ µs/request, [\\d.,]+% of server CPU per request`,
          ),
        );

    expect(json.code, json.stderr).toBe(0);
    const out = JSON.parse(json.stdout) as {
      options: { pods: number; watchers: number; churn: number };
      results: Record<
        string,
        {
          creates: { one: { count: number }; many: { count: number } };
          lists: Record<string, { count: number; p50Ms: number; p99Ms: number }>;
          watch: {
            expected: number;
            delivered: number;
            lost: number;
            duplicates: number;
            closed: number;
            errors: number;
            serverCpuMsPer1000: number;
          };
        }
      >;
      slo: { target: string; pass: boolean; p99Ms: number }[];
      secured: {
        ratios: { measure: string; ratio: number; pass: boolean }[];
        stages: {
          phase: string;
          costs: { requests: number; perStage: Record<string, { usPerRequest: number }> };
        }[];
      };
    };
    expect(out.options).toMatchObject({ pods: 12, watchers: 3, churn: 8 });
    expect(Object.keys(out.results).sort()).toEqual(["cache", "no-cache", "secured"]);
    for (const r of Object.values(out.results)) {
      expect(r.creates.one.count + r.creates.many.count).toBe(12);
      expect(r.lists.clusterCache.count).toBe(2);
      expect(r.lists.clusterCache.p99Ms).toBeGreaterThanOrEqual(r.lists.clusterCache.p50Ms);
      expect(r.watch).toMatchObject({
        expected: 24,
        delivered: 24,
        lost: 0,
        duplicates: 0,
        closed: 0,
        errors: 0,
      });
      expect(Number.isFinite(r.watch.serverCpuMsPer1000)).toBe(true); // read from /proc/<pid>/stat
    }
    expect(out.slo).toHaveLength(12);
    expect(out.secured.ratios).toHaveLength(10);
    // Every pod create of the 4-client phase passed the three stages; its requests are counted.
    const creates = out.secured.stages.find((s) => s.phase === "create (4 clients)");
    expect(creates?.costs.requests).toBe(12 - 3);
    expect(Object.keys(creates?.costs.perStage ?? {}).sort()).toEqual(["admission", "authn", "authz"]);
  }, 240_000);
});
