// Chapter 7's demo, run as a learner runs it: the story's facts, not its timings — the kubelets'
// list and watch with their node's field selector; the pod's way to Ready in order, startup before
// readiness; readiness moving it out of its Service's endpoints and back with no restart; liveness
// killing and restarting it; and no process left behind: components, containers (which outlive
// their kubelet on purpose), also when the demo is stopped with Ctrl-C halfway.
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
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

/** The pids step 1 printed, by component (`+  0.01 s  kube-apiserver  pid 123 …`). */
function componentPids(stdout: string): Map<string, number> {
  const pids = new Map<string, number>();
  for (const m of stdout.matchAll(/^ {3}\+ *[\d.]+ s {2}(kube-\S+|kubelet node-\d) +pid (\d+)/gm))
    pids.set(m[1], Number(m[2]));
  return pids;
}

/**
 * The containers `kubelets` started, from ps: their children that lead their own process group
 * (the process runtime starts each container detached; other children, esbuild's, do not).
 */
function containersOf(kubelets: number[]): number[] {
  const out = execFileSync("ps", ["-A", "-o", "pid=,ppid=,pgid="], { encoding: "utf8" });
  return out
    .split("\n")
    .map((l) => l.trim().split(/\s+/).map(Number))
    .filter(([pid, ppid, pgid]) => pid && kubelets.includes(ppid) && pgid === pid)
    .map(([pid]) => pid);
}

describe("npm run chapter -- 7", () => {
  let out: { code: number | null; stdout: string; stderr: string };
  let lines: string[];
  const lineAt = (re: RegExp, from = 0) => {
    const i = lineOf(lines, re, from);
    expect(i, `no line matching ${re} after line ${from}`).toBeGreaterThanOrEqual(0);
    return i;
  };
  const stepAt = (n: number) => lineAt(new RegExp(`^${n}\\. `));

  beforeAll(async () => {
    out = await runDemoToEnd("07-kubelet", [], {}, 240_000);
    lines = out.stdout.split("\n");
  }, 250_000);

  it("runs every step and exits 0", () => {
    expect(out.code, out.stderr + out.stdout.slice(-3000)).toBe(0);
    for (const n of [1, 2, 3, 4, 5, 6, 7]) expect(out.stdout).toMatch(new RegExp(`^${n}\\. `, "m"));
    expect([...componentPids(out.stdout).keys()].sort()).toEqual([
      "kube-apiserver",
      "kube-controller-manager",
      "kube-scheduler",
      "kubelet node-1",
      "kubelet node-2",
    ]);
  });

  it("shows each kubelet's list and watch of pods, with its own node in the field selector", () => {
    const s2 = stepAt(2);
    for (const node of ["node-1", "node-2"]) {
      const selector = `fieldSelector=spec.nodeName%3D${node}`;
      const list = lines[lineAt(new RegExp(`^ +system:node:${node} +list +/api/v1/pods\\?`), s2)];
      expect(list).toContain(selector);
      expect(list).toContain("resourceVersion=0");
      const watch = lines[lineAt(new RegExp(`^ +system:node:${node} +watch +/api/v1/pods\\?`), s2)];
      expect(watch).toContain(selector);
      expect(watch).toContain("watch=true");
      expect(watch).not.toContain("resourceVersion=0&");
    }
    expect(lineOf(lines, /^3\. /)).toBeGreaterThan(s2);
  });

  it("takes the pod from created to Ready in order: bound, ContainerCreating, started by the startup probe, then Ready", () => {
    const s3 = stepAt(3);
    const bound = lineAt(/pod +Pending +node-\d/, lineAt(/pod +Pending +- /, s3));
    lineAt(/event +Normal +Scheduled +Successfully assigned default\/web to node-\d/, s3);
    // The status write (ContainerCreating) and the kubelet's events race each other to the watch.
    const creating = lineAt(/pod +Pending +node-\d +waiting: ContainerCreating/, bound);
    const startedEvent = lineAt(/event +Normal +Started +Started container web$/, bound);
    const started = lineAt(
      /pod +Running +node-\d +running +started=true +ready=false .*Ready=False$/,
      Math.max(creating, startedEvent),
    );
    lineAt(/pod +Running +node-\d +running +started=true +ready=true +restarts=0 +Ready=True$/, started);
    // No readiness probe ran before the startup probe passed: readiness never failed in step 3.
    expect(lines.slice(s3, stepAt(4)).some((l) => /Readiness probe failed/.test(l))).toBe(false);
    const ready = /Ready [\d.]+ s after it was created, on (node-\d), podIP (10\.244\.\d+\.\d+)\./.exec(
      lines[lineAt(/Ready .* after it was created/, s3)],
    );
    expect(ready).not.toBeNull();
    const [, node, ip] = ready as RegExpExecArray;
    expect(lines[lineAt(/^ +web +1\/1 +Running +0 /, s3)]).toContain(`${ip}   ${node}`);
    for (const t of ["PodReadyToStartContainers", "Initialized", "PodScheduled", "ContainersReady", "Ready"])
      expect(lines[lineAt(new RegExp(`^ +${t} +True`), s3)]).toBeDefined();
    lineAt(/^ +Startup: +http-get http:\/\/:8080\/healthz .*period=1s #success=1 #failure=10/, s3);
    lineAt(/^ +system:kube-scheduler +CREATE +\/api\/v1\/namespaces\/default\/pods\/web\/binding$/, s3);
    lineAt(new RegExp(`^ +system:node:${node} +PATCH +/api/v1/namespaces/default/pods/web/status`), s3);
  });

  it("readiness failing takes the pod out of the endpoints with no restart, and back when it passes", () => {
    const s4 = stepAt(4);
    const ip = /podIP (10\.244\.\d+\.\d+)\./.exec(out.stdout)?.[1] as string;
    expect(lines[lineAt(/^ +web +\S+:8080 /, s4)]).toContain(`${ip}:8080`);
    const touched = lineAt(/^ +\$ kubectl exec web -- touch \/tmp\/unready$/, s4);
    const failed = lineAt(/Readiness probe failed: HTTP probe failed with statuscode: 503/, touched);
    const notReady = lineAt(/pod +Running .* started=true +ready=false +restarts=0 +Ready=False$/, failed);
    lineAt(
      new RegExp(`endpoints web +addresses=- +notReadyAddresses=${ip.replace(/\./g, "\\.")}$`),
      notReady,
    );
    const emptied = lineAt(/^ +\$ kubectl get endpoints web$/, notReady);
    expect(lines[emptied + 2]).toMatch(/^ +web +\d+s$/); // no address left to show
    expect(lines[lineAt(/^ +web +0\/1 +Running +0 /, emptied)]).toBeDefined();
    const removed = lineAt(/^ +\$ kubectl exec web -- rm \/tmp\/unready$/, emptied);
    const readyAgain = lineAt(/pod +Running .* ready=true +restarts=0 +Ready=True$/, removed);
    lineAt(
      new RegExp(`endpoints web +addresses=${ip.replace(/\./g, "\\.")} +notReadyAddresses=-$`),
      readyAgain,
    );
    expect(lines.slice(s4, stepAt(5)).some((l) => /restarts=[1-9]|Killing/.test(l))).toBe(false);
  });

  it("liveness failing kills and restarts the container: the events, RESTARTS, logs --previous", () => {
    const s5 = stepAt(5);
    const touched = lineAt(/^ +\$ kubectl exec web -- touch \/tmp\/unhealthy$/, s5);
    let at = lineAt(/Liveness probe failed: HTTP probe failed with statuscode: 500$/, touched);
    at = lineAt(/Liveness probe failed: HTTP probe failed with statuscode: 500 \(x3\)$/, at);
    at = lineAt(/event +Normal +Killing +Container web failed liveness probe, will be restarted$/, at);
    at = lineAt(/event +Normal +Started +Started container web \(x2\)$/, at);
    at = lineAt(/pod +Running .* started=true +ready=true +restarts=1 +Ready=True$/, at);
    const pids = /The container's process: pid (\d+) \(gone\) → pid (\d+)\./.exec(
      lines[lineAt(/container's process/, at)],
    );
    expect(pids).not.toBeNull();
    expect(pids?.[1]).not.toBe(pids?.[2]);
    lineAt(/^ +web +1\/1 +Running +1 \(\d+s ago\) /, at);
    const logs = lineAt(/^ +\$ kubectl logs web --previous --tail=4$/, at);
    lineAt(/^ +GET \/healthz 500$/, logs);
    lineAt(/^ +lastState\.terminated: exitCode 0, reason Completed, restartCount 1$/, logs);
  });

  it("sums up what it measured, each figure beside where it comes from", () => {
    const s6 = stepAt(6);
    for (const what of [
      "created → Started event",
      "touch /tmp/unready → Ready=False",
      "Ready=False → out of endpoints",
      "rm /tmp/unready → Ready=True",
      "touch /tmp/unhealthy → Killing",
      "Killing → Started again",
    ]) {
      const row = lines[lineAt(new RegExp(`^ +${what.replace(/[/.]/g, "\\$&")} +\\d+\\.\\d\\d s +\\S`), s6)];
      expect(Number(/ (\d+\.\d\d) s /.exec(row)?.[1])).toBeGreaterThanOrEqual(0);
    }
  });

  it("leaves no process behind: components, containers, and its folder", () => {
    const s7 = stepAt(7);
    expect(lines[lineAt(/^ +No process left running\.$/, s7)]).toBeDefined();
    for (const [name, pid] of componentPids(out.stdout)) expect(alive(pid), `${name} ${pid}`).toBe(false);
    const containers = new Set(
      [
        ...(/The container's process: pid (\d+) \(gone\) → pid (\d+)\./.exec(out.stdout) ?? []).slice(1),
        ...(/then the containers they left running \(pid (\d+)\)/.exec(out.stdout) ?? []).slice(1),
      ].map(Number),
    );
    expect(containers.size).toBe(2); // the one liveness killed, and the one cleanup stopped
    for (const pid of containers) expect(alive(pid), `container ${pid}`).toBe(false);
    const folder = /--audit-log-path=(\S+)\/audit\.log,/.exec(out.stdout)?.[1];
    expect(folder).toBeDefined();
    expect(existsSync(folder as string)).toBe(false);
  });
});

describe("Ctrl-C halfway through npm run chapter -- 7", () => {
  let demo: ReturnType<typeof startDemo> | undefined;
  let containers: number[] = [];
  afterAll(() => {
    demo?.kill();
    for (const pid of containers) {
      try {
        process.kill(-pid, "SIGKILL");
      } catch {
        // gone, as it should be
      }
    }
  });

  it("stops every component and every container it started", async () => {
    demo = startDemo("07-kubelet", []);
    await demo.waitForStdout("Started container web", 180_000);
    const pids = componentPids(demo.stdout());
    expect(pids.size).toBe(5);
    const kubelets = [...pids].filter(([n]) => n.startsWith("kubelet")).map(([, pid]) => pid);
    // The container is a child of its kubelet until that kubelet dies.
    const deadline = Date.now() + 30_000;
    while (containers.length === 0 && Date.now() < deadline) {
      containers = containersOf(kubelets);
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(containers.length).toBeGreaterThan(0);
    demo.child.kill("SIGINT");
    expect(await demo.waitForExit(60_000)).toBe(0);
    expect(demo.stdout()).toContain("No process left running.");
    for (const [name, pid] of pids) expect(alive(pid), `${name} ${pid}`).toBe(false);
    for (const pid of containers) expect(alive(pid), `container ${pid}`).toBe(false);
  }, 250_000);
});
