// Chapter 8's demo, run as a learner runs it: the story's facts, not its timings — every component
// its own process; the two Leases held by named processes; the Deployment's pods Ready; one pod's
// spans from the controller-manager, the API server, the scheduler and the kubelet, in the order of
// its life; the leading scheduler killed and the OTHER one taking its Lease before the waiting pod
// is bound — not before the Lease could have expired; and no process left behind, also when the
// demo is stopped with Ctrl-C halfway.
import { existsSync } from "node:fs";
import { dirname } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { lineOf, runDemoToEnd, startDemo } from "../demo-process.ts";

/** Whether a process with this pid still exists. */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** The pids step 1 printed, by component (`+  0.15 s  etcd   pid 123 …`). */
function componentPids(stdout: string): Map<string, number> {
  const pids = new Map<string, number>();
  for (const m of stdout.matchAll(/^ {3}\+ *[\d.]+ s {2}(etcd|kube-\S+|kubelet node-\d) +pid (\d+)/gm))
    pids.set(m[1], Number(m[2]));
  return pids;
}

const components = [
  "etcd",
  "kube-apiserver",
  "kube-controller-manager-1",
  "kube-controller-manager-2",
  "kube-scheduler-1",
  "kube-scheduler-2",
  "kubelet node-1",
  "kubelet node-2",
];

describe("npm run chapter -- 8", () => {
  let out: { code: number | null; stdout: string; stderr: string };
  let lines: string[];
  const lineAt = (re: RegExp, from = 0) => {
    const i = lineOf(lines, re, from);
    expect(i, `no line matching ${re} after line ${from}`).toBeGreaterThanOrEqual(0);
    return i;
  };
  const stepAt = (n: number) => lineAt(new RegExp(`^${n}\\. `));

  beforeAll(async () => {
    out = await runDemoToEnd("08-cluster", [], {}, 290_000);
    lines = out.stdout.split("\n");
  }, 300_000);

  it("starts every component as its own process and runs every step", () => {
    expect(out.code, out.stderr + out.stdout.slice(-3000)).toBe(0);
    for (const n of [1, 2, 3, 4, 5, 6, 7]) expect(out.stdout).toMatch(new RegExp(`^${n}\\. `, "m"));
    const pids = componentPids(out.stdout);
    expect([...pids.keys()].sort()).toEqual([...components].sort());
    expect(new Set(pids.values()).size).toBe(components.length);
  });

  it("shows each Lease held by one of the two replicas", () => {
    const s2 = stepAt(2);
    for (const lease of ["kube-scheduler", "kube-controller-manager"]) {
      const line =
        lines[lineAt(new RegExp(`^ +lease ${lease} +held by ${lease}-[12] \\(holderIdentity \\S+\\)$`), s2)];
      const id = /holderIdentity (\S+)\)/.exec(line)?.[1] as string;
      // kubectl, reading the same Lease, names the same holder.
      lineAt(new RegExp(`^ +${lease} +${id.replace(/[.]/g, "\\.")} +`), s2);
    }
  });

  it("rolls the Deployment out: two pods Running and Ready on the nodes", () => {
    const s3 = stepAt(3);
    lineAt(/^ +deployment\.apps\/web created$/, s3);
    lineAt(/^ +deployment "web" successfully rolled out$/, s3);
    const pods = lines.slice(s3, stepAt(4)).filter((l) => /^ +web-\S+ +1\/1 +Running +0 /.test(l));
    expect(pods).toHaveLength(2);
    for (const p of pods) expect(p).toMatch(/ 10\.244\.[12]\.\d+ +node-[12] /);
  });

  it("traces one pod across the processes, in the order of its life", () => {
    const s4 = stepAt(4);
    const end = stepAt(5);
    const pod = /^ +pod default\/(web-\S+): \d+ spans from (\d) components$/.exec(
      lines[lineAt(/^ +pod default\/web-/, s4)],
    );
    expect(pod, "the timeline's header").not.toBeNull();
    expect(Number(pod?.[2])).toBeGreaterThanOrEqual(4);
    const span = (re: RegExp) => {
      const i = lineAt(re, s4);
      expect(i, `${re} inside step 4`).toBeLessThan(end);
      return Number(/^ +\+([\d.]+) /.exec(lines[i])?.[1]);
    };
    const replicaSet = span(/^ +\+[\d.]+ +kube-controller-manager +syncReplicaSet /);
    const create = span(
      /^ +\+[\d.]+ +apiserver +POST \/api\/v1\/namespaces\/\{:namespace\}\/pods .*status_code=201/,
    );
    const schedule = span(/^ +\+[\d.]+ +kube-scheduler +scheduleOne .*node\.name=node-[12]/);
    const binding = span(
      /^ +\+[\d.]+ +apiserver +POST \S+\/pods\/\{:name\}\/binding .*user=system:kube-scheduler/,
    );
    const sync = span(/^ +\+[\d.]+ +kubelet +syncPod .*update_type=create/);
    const start = span(/^ +\+[\d.]+ +kubelet +runtime\.v1\.RuntimeService\/StartContainer /);
    const readyStatus = span(/^ +\+[\d.]+ +kubelet +statusManager\.syncPod .*phase=Running ready=true/);
    expect(replicaSet).toBeLessThanOrEqual(create);
    expect(create).toBeLessThanOrEqual(schedule);
    expect(schedule).toBeLessThanOrEqual(binding);
    expect(binding).toBeLessThanOrEqual(sync);
    expect(sync).toBeLessThanOrEqual(start);
    expect(start).toBeLessThanOrEqual(readyStatus);
    const summary = lines[lineAt(/^ +created → scheduled \+/, s4)];
    expect(summary).not.toContain("not seen");
    expect(summary).toMatch(/→ running \+[\d.]+m?s → ready \+[\d.]+m?s \(total [\d.]+m?s\)$/);
  });

  it("kills the leading scheduler; the other takes the Lease, then binds the waiting pod", () => {
    const s2 = stepAt(2);
    const leader = /held by (kube-scheduler-[12])/.exec(
      lines[lineAt(/^ +lease kube-scheduler +held by/, s2)],
    )?.[1];
    const s5 = stepAt(5);
    const killed = /kill -9 (kube-scheduler-[12]) \(pid (\d+)\)/.exec(
      lines[lineAt(/kill -9 kube-scheduler-/, s5)],
    );
    expect(killed?.[1]).toBe(leader);
    expect(alive(Number(killed?.[2]))).toBe(false);
    const other = leader === "kube-scheduler-1" ? "kube-scheduler-2" : "kube-scheduler-1";
    const created = lineAt(
      /^ +\+ *[\d.]+ s {2}pod web-\S+ created by the ReplicaSet controller: Pending, no node$/,
      s5,
    );
    const acquired = lineAt(
      new RegExp(`^ +\\+ *[\\d.]+ s {2}${other} acquired lease kube-scheduler \\(leaseTransitions 1\\)$`),
      created,
    );
    const bound = lineAt(
      new RegExp(`^ +\\+ *[\\d.]+ s {2}pod web-\\S+ bound to node-[12] by ${other}$`),
      created,
    );
    expect(bound).toBeGreaterThanOrEqual(acquired);
    // Nothing bound the pod while no scheduler led.
    expect(lines.slice(created, acquired).some((l) => / bound to /.test(l))).toBe(false);
    lineAt(/^ +web +3\/3 +3 +3 /, bound);
    // The last renewal was at most a renew deadline (10 s) before the kill and a Lease lasts 15 s:
    // a standby that took over within 5 s of the kill would not have waited for it to expire.
    const takeover = /^ +\+ *([\d.]+) s /.exec(lines[acquired])?.[1];
    expect(Number(takeover)).toBeGreaterThanOrEqual(5);
  });

  it("sums up what it measured, each figure beside where it comes from", () => {
    const s6 = stepAt(6);
    for (const what of [
      "kill -9 → the standby holds the Lease",
      "Lease taken → the pod bound",
      "pod bound → Ready",
      "kubectl create → 2 pods Ready",
    ]) {
      const row = lines[lineAt(new RegExp(`^ +${what.replace(/[.]/g, "\\$&")} +\\d+\\.\\d\\d s +\\S`), s6)];
      expect(Number(/ (\d+\.\d\d) s /.exec(row)?.[1])).toBeGreaterThanOrEqual(0);
    }
  });

  it("leaves no process behind: components, containers, the cluster's folder", () => {
    const s7 = stepAt(7);
    lineAt(/^ +No process left running\.$/, s7);
    for (const [name, pid] of componentPids(out.stdout)) expect(alive(pid), `${name} ${pid}`).toBe(false);
    const containers = /then the containers they left running \(pids ([\d, ]+)\)/.exec(out.stdout)?.[1];
    expect(containers, "the containers cleanup stopped").toBeDefined();
    const pids = (containers as string).split(", ").map(Number);
    expect(pids.length).toBe(3); // the Deployment's three pods
    for (const pid of pids) expect(alive(pid), `container ${pid}`).toBe(false);
    const kubeconfig = /export KUBECONFIG=(\S+)/.exec(out.stdout)?.[1] as string;
    expect(existsSync(dirname(dirname(kubeconfig)))).toBe(false);
  });
});

describe("Ctrl-C halfway through npm run chapter -- 8", () => {
  let demo: ReturnType<typeof startDemo> | undefined;
  afterAll(() => demo?.kill());

  it("stops every component it started", async () => {
    demo = startDemo("08-cluster", []);
    await demo.waitForStdout("2. Who leads", 240_000);
    const pids = componentPids(demo.stdout());
    expect(pids.size).toBe(components.length);
    demo.child.kill("SIGINT");
    expect(await demo.waitForExit(60_000)).toBe(0);
    expect(demo.stdout()).toContain("No process left running.");
    for (const [name, pid] of pids) expect(alive(pid), `${name} ${pid}`).toBe(false);
  }, 320_000);
});
