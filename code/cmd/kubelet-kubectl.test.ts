/**
 * Chapter 7's proofs, through the real API server, scheduler and kubelet — each its own process —
 * with containers as real processes and the real kubectl: a pod's way to Ready with the kubelet's
 * conditions; `kubectl logs` and `exec`; liveness restarts with a growing backoff; a startup probe
 * holding liveness off; init containers in order; run-to-completion pods; graceful deletion
 * (preStop, SIGTERM, SIGKILL at the grace period); an unknown image; a kubelet `kill -9`ed and
 * restarted adopting its running containers.
 *
 * The cluster is started once; each test makes its own pods and waits on what it proves, never on
 * a fixed sleep. `--sync-frequency=10s` (upstream: 1m) lets a pod waiting in a backoff show its
 * new reason within seconds rather than a minute.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Container, Pod } from "../api/core.ts";
import { isNotFound } from "../client/errors.ts";
import { waitFor } from "../testing/wait-for.ts";
import { LocalCluster } from "./testing/local-cluster.ts";

let cluster: LocalCluster;

beforeAll(async () => {
  cluster = await LocalCluster.start({
    nodes: ["node-1"],
    controllerManager: false,
    kubeletArgs: ["--sync-frequency=10s"],
  });
}, 180_000);

afterAll(async () => {
  await cluster?.close();
}, 60_000);

const pods = () => cluster.admin.coreV1.pods("default");

function pod(name: string, containers: Container[], spec: Partial<Pod["spec"]> = {}): Pod {
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name, namespace: "default" },
    spec: { containers, ...spec },
  };
}

/** waitFor, and on a timeout with the kubelet's last lines. */
function eventually<T>(check: () => Promise<T | undefined>, what: string, timeoutMs = 60_000): Promise<T> {
  return waitFor(what, check, timeoutMs).catch((err: Error) => {
    throw new Error(
      `${err.message}\n${`--- kubelet:\n${cluster.kubelets.get("node-1")?.process.stderr().slice(-3000)}`}`,
    );
  });
}

const getPod = (name: string) => pods().get(name);
const until = (name: string, ok: (p: Pod) => boolean, what: string, timeoutMs?: number) =>
  eventually(
    async () => {
      const p = await getPod(name);
      return ok(p) ? p : undefined;
    },
    `${name}: ${what}`,
    timeoutMs,
  );
const cond = (p: Pod, type: string) => p.status?.conditions?.find((c) => c.type === type)?.status;
const events = async (name: string) =>
  (await cluster.admin.coreV1.events("default").list()).items.filter((e) => e.involvedObject.name === name);

/** Every distinct (phase, container state, Ready) the pod passed through, in order, from a watch. */
/**
 * Opens a watch on pod `name` (resolved once the API server has answered it, so nothing created
 * after is missed) whose `states` are the pod's distinct states, up to the first Ready=True one —
 * the watch, not a GET, must have delivered that — or until `stop` aborts.
 */
async function watchStates(name: string, stop: AbortSignal): Promise<{ states: Promise<string[]> }> {
  const seen: string[] = [];
  const w = await pods().watch({ fieldSelector: `metadata.name=${name}`, signal: stop });
  const states = (async () => {
    try {
      for await (const ev of w) {
        const p = ev.object as Pod;
        const cs = p.status?.containerStatuses?.[0];
        const state = cs?.state?.running
          ? "running"
          : (cs?.state?.waiting?.reason ?? (cs ? "terminated" : "-"));
        const line = `${p.status?.phase}/${p.spec.nodeName ? "bound" : "unbound"}/${state}/ready=${cond(p, "Ready") ?? "-"}`;
        if (seen.at(-1) !== line) seen.push(line);
        if (line.endsWith("/running/ready=True")) break;
      }
    } catch {
      // aborted
    }
    return seen;
  })();
  return { states };
}

describe("a pod's life on one kubelet", () => {
  it("goes Pending → ContainerCreating → Running → Ready, with the kubelet's five conditions", async () => {
    const stop = new AbortController();
    const { states } = await watchStates("web", stop.signal); // open before the pod exists
    await pods().create(
      pod("web", [
        {
          name: "web",
          image: "course/web:1.0",
          args: ["--start-delay=1"],
          ports: [{ containerPort: 8080 }],
          readinessProbe: { httpGet: { path: "/readyz", port: 8080 }, periodSeconds: 1 },
        },
      ]),
    );
    const p = await until("web", (x) => cond(x, "Ready") === "True", "Ready");
    // The watch delivers Ready=True soon after the GET saw it; the abort only bounds a lost event.
    const timer = setTimeout(() => stop.abort(), 30_000);
    const seen = await states;
    clearTimeout(timer);
    const order = [
      "Pending/unbound/-",
      "Pending/bound/ContainerCreating",
      "Running/bound/running/ready=False",
      "Running/bound/running/ready=True",
    ];
    const at = order.map((s) => seen.findIndex((x) => x.startsWith(s)));
    expect(
      at.every((i) => i >= 0),
      seen.join("\n"),
    ).toBe(true);
    expect([...at].sort((a, b) => a - b)).toEqual(at);
    for (const t of ["PodScheduled", "PodReadyToStartContainers", "Initialized", "ContainersReady", "Ready"])
      expect(cond(p, t), t).toBe("True");
    expect(p.status?.podIP).toMatch(/^10\.244\.1\./);

    const got = await cluster.kubectl(["get", "pod", "web"]);
    expect(got.stdout).toMatch(/web\s+1\/1\s+Running\s+0/);
  });

  it("kubectl logs (--tail, -c, -f) and kubectl exec (stdout, stdin, the exit code) reach the container", async () => {
    const logs = await cluster.kubectl(["logs", "web"]);
    expect(logs.code, logs.stderr).toBe(0);
    expect(logs.stdout).toContain("GET /readyz 200");
    const tail = await cluster.kubectl(["logs", "web", "-c", "web", "--tail=1"]);
    expect(tail.stdout.trim().split("\n")).toHaveLength(1);
    // -f keeps the stream open and brings new lines: the probes' requests, once a second.
    const follow = await cluster.kubectl(["logs", "-f", "web", "--tail=0", "--request-timeout=3s"], 20_000);
    expect(follow.stdout).toContain("GET /readyz 200");

    const ls = await cluster.kubectl(["exec", "web", "--", "sh", "-c", "echo hi > /tmp/x; cat /tmp/x"]);
    expect(ls).toMatchObject({ code: 0, stdout: "hi\n" });
    const failed = await cluster.kubectl(["exec", "web", "--", "sh", "-c", "exit 3"]);
    expect(failed.code).toBe(3);
    expect(failed.stderr).toContain("command terminated with exit code 3");
    const missing = await cluster.kubectl(["exec", "web", "--", "nosuchcommand"]);
    expect(missing.code).not.toBe(0);
  });
});

describe("probes", () => {
  it("a failing liveness probe restarts the container: the event, lastState and logs --previous", async () => {
    await pods().create(
      pod("live", [
        {
          name: "web",
          image: "course/web:1.0",
          livenessProbe: {
            httpGet: { path: "/healthz", port: 8080 },
            periodSeconds: 1,
            failureThreshold: 2,
            terminationGracePeriodSeconds: 1,
          },
        },
      ]),
    );
    await until("live", (p) => !!p.status?.containerStatuses?.[0]?.state?.running, "running");
    const touch = await cluster.kubectl(["exec", "live", "--", "touch", "/tmp/unhealthy"]);
    expect(touch.code, touch.stderr).toBe(0);
    const p = await until(
      "live",
      (x) => (x.status?.containerStatuses?.[0]?.restartCount ?? 0) >= 1,
      "restarted",
    );
    const cs = p.status?.containerStatuses?.[0];
    expect(cs?.lastState?.terminated?.exitCode).toBeDefined();
    const ev = await events("live");
    expect(ev.map((e) => e.message)).toContain(
      "Liveness probe failed: HTTP probe failed with statuscode: 500",
    );
    expect(
      ev.some(
        (e) => e.reason === "Killing" && /failed liveness probe, will be restarted/.test(e.message ?? ""),
      ),
    ).toBe(true);
    const prev = await cluster.kubectl(["logs", "live", "--previous"]);
    expect(prev.stdout).toContain("GET /healthz 500");
    const got = await cluster.kubectl(["get", "pod", "live"]);
    expect(got.stdout).toMatch(/live\s+1\/1\s+Running\s+1 \(/);
  });

  it("a container that keeps failing its liveness probe waits longer each time: back-off 10s, then 20s", async () => {
    // Upstream's liveness example: healthy for a while, then /tmp/healthy is gone.
    await pods().create(
      pod("crashloop", [
        {
          name: "busybox",
          image: "registry.k8s.io/busybox:1.36",
          args: ["sh", "-c", "touch /tmp/healthy; sleep 1; rm -f /tmp/healthy; sleep 600"],
          livenessProbe: {
            exec: { command: ["cat", "/tmp/healthy"] },
            periodSeconds: 1,
            failureThreshold: 1,
            terminationGracePeriodSeconds: 1,
          },
        },
      ]),
    );
    const messages = new Set<string>();
    await eventually(
      async () => {
        const p = await getPod("crashloop");
        const waiting = p.status?.containerStatuses?.[0]?.state?.waiting;
        if (waiting?.reason === "CrashLoopBackOff")
          messages.add((waiting.message ?? "").split(" restarting")[0]);
        return messages.has("back-off 20s") ? true : undefined;
      },
      "back-off 20s",
      120_000,
    );
    expect(messages.has("back-off 10s")).toBe(true);
    const ev = await events("crashloop");
    expect(ev.some((e) => (e.message ?? "").startsWith("Liveness probe failed: cat: "))).toBe(true);
    expect(
      ev.some(
        (e) => e.reason === "BackOff" && /Back-off restarting failed container busybox/.test(e.message ?? ""),
      ),
    ).toBe(true);
    const got = await cluster.kubectl(["get", "pod", "crashloop"]);
    expect(got.stdout).toMatch(/crashloop\s+0\/1\s+(CrashLoopBackOff|Running)\s+[2-9]/);
  }, 150_000);

  it("a startup probe holds liveness off while a slow app starts", async () => {
    // Liveness alone would kill this app (it listens after 4 s) after one failed second.
    const probe = { httpGet: { path: "/healthz", port: 8080 }, periodSeconds: 1 };
    await pods().create(
      pod("slow", [
        {
          name: "web",
          image: "course/web:1.0",
          args: ["--start-delay=4"],
          startupProbe: { ...probe, failureThreshold: 20 },
          livenessProbe: { ...probe, failureThreshold: 1 },
        },
      ]),
    );
    const p = await until(
      "slow",
      (x) => x.status?.containerStatuses?.[0]?.started === true,
      "started",
      60_000,
    );
    expect(p.status?.containerStatuses?.[0]?.restartCount).toBe(0);
    const ev = await events("slow");
    expect(ev.some((e) => (e.message ?? "").startsWith("Startup probe failed:"))).toBe(true);
    expect(ev.some((e) => (e.message ?? "").startsWith("Liveness probe failed:"))).toBe(false);
  });
});

describe("containers in order, to completion, and stopped gracefully", () => {
  it("init containers run one after the other, then the app", async () => {
    const sleepy = (name: string): Container => ({
      name,
      image: "registry.k8s.io/busybox:1.36",
      args: ["sh", "-c", `echo ${name}; sleep 1`],
    });
    await pods().create(
      pod("init", [{ name: "app", image: "course/sleeper:1.0" }], {
        initContainers: [sleepy("first"), sleepy("second")],
      }),
    );
    const p = await until("init", (x) => !!x.status?.containerStatuses?.[0]?.state?.running, "app running");
    const [a, b] = p.status?.initContainerStatuses ?? [];
    expect([a?.name, b?.name]).toEqual(["first", "second"]);
    const ta = a?.state?.terminated;
    const tb = b?.state?.terminated;
    expect(ta?.reason).toBe("Completed");
    expect(tb?.reason).toBe("Completed");
    expect(Date.parse(tb?.startedAt ?? "")).toBeGreaterThanOrEqual(Date.parse(ta?.finishedAt ?? ""));
    const app = Date.parse(p.status?.containerStatuses?.[0]?.state?.running?.startedAt ?? "");
    expect(app).toBeGreaterThanOrEqual(Date.parse(tb?.finishedAt ?? ""));
    expect(cond(p, "Initialized")).toBe("True");
  });

  it("restartPolicy Never: exit 0 ends Completed (Succeeded), exit 3 ends Error (Failed)", async () => {
    const worker = (code: number): Container => ({
      name: "job",
      image: "course/worker:1.0",
      args: ["--seconds=1", `--exit-code=${code}`],
    });
    await pods().create(pod("done", [worker(0)], { restartPolicy: "Never" }));
    await pods().create(pod("broken", [worker(3)], { restartPolicy: "Never" }));
    const ok = await until("done", (x) => x.status?.phase === "Succeeded", "Succeeded");
    const bad = await until("broken", (x) => x.status?.phase === "Failed", "Failed");
    expect(ok.status?.containerStatuses?.[0]?.state?.terminated).toMatchObject({
      exitCode: 0,
      reason: "Completed",
    });
    expect(bad.status?.containerStatuses?.[0]?.state?.terminated).toMatchObject({
      exitCode: 3,
      reason: "Error",
    });
    const got = await cluster.kubectl(["get", "pods", "done", "broken"]);
    expect(got.stdout).toMatch(/done\s+0\/1\s+Completed\s+0/);
    expect(got.stdout).toMatch(/broken\s+0\/1\s+Error\s+0/);
  });

  it("deletion: preStop first, then SIGTERM, and SIGKILL once the grace period is over", async () => {
    const sleeper = (args: string[]): Container => ({
      name: "app",
      image: "course/sleeper:1.0",
      args,
      lifecycle: { preStop: { sleep: { seconds: 1 } } },
    });
    const spec = { terminationGracePeriodSeconds: 3 };
    await pods().create(pod("polite", [sleeper(["--term-delay=0"])], spec));
    await pods().create(pod("stubborn", [sleeper(["--ignore-sigterm"])], spec));
    await until("polite", (x) => !!x.status?.containerStatuses?.[0]?.state?.running, "running");
    await until("stubborn", (x) => !!x.status?.containerStatuses?.[0]?.state?.running, "running");

    /**
     * The container's terminated state as the kubelet reported it, and how long after the DELETE
     * that report reached a watch (this test's clock: ms, unlike the status's whole seconds).
     */
    const finalState = async (name: string) => {
      const stop = new AbortController();
      let terminated: { exitCode: number; reason?: string } | undefined;
      let afterMs = Number.NaN;
      const w = await pods().watch({ fieldSelector: `metadata.name=${name}`, signal: stop.signal });
      const requested = Date.now();
      const done = (async () => {
        for await (const ev of w) {
          const t = (ev.object as Pod).status?.containerStatuses?.[0]?.state?.terminated;
          if (t && !terminated) {
            terminated = t;
            afterMs = Date.now() - requested;
          }
          if (ev.type === "DELETED") return;
        }
      })().catch(() => undefined);
      await pods().delete(name);
      await Promise.race([done, new Promise((r) => setTimeout(r, 30_000))]);
      stop.abort();
      return { terminated, afterMs };
    };
    const [polite, stubborn] = await Promise.all([finalState("polite"), finalState("stubborn")]);
    // The 1 s preStop runs first; then SIGTERM, and the polite one exits at once with 143.
    expect(polite.terminated?.exitCode).toBe(143);
    expect(polite.afterMs).toBeGreaterThanOrEqual(1000);
    // The stubborn one ignores SIGTERM: only the SIGKILL at the 3 s grace period ends it (137).
    expect(stubborn.terminated?.exitCode).toBe(137);
    expect(stubborn.afterMs).toBeGreaterThanOrEqual(3000);
    await expect(getPod("stubborn")).rejects.toSatisfy(isNotFound);
  });

  it("an image no registry has: ErrImagePull, then ImagePullBackOff", async () => {
    await pods().create(pod("nope", [{ name: "app", image: "course/no-such-image:1.0" }]));
    const reasons: string[] = [];
    await eventually(
      async () => {
        const r = (await getPod("nope")).status?.containerStatuses?.[0]?.state?.waiting?.reason;
        if (r && reasons.at(-1) !== r) reasons.push(r);
        return reasons.includes("ImagePullBackOff") ? true : undefined;
      },
      "ImagePullBackOff",
      90_000,
    );
    // ContainerCreating until the first pull fails, then ErrImagePull, then the backoff.
    expect(reasons.indexOf("ErrImagePull")).toBeGreaterThanOrEqual(0);
    expect(reasons.indexOf("ErrImagePull")).toBeLessThan(reasons.indexOf("ImagePullBackOff"));
    const ev = await events("nope");
    expect(ev.some((e) => e.reason === "Failed" && (e.message ?? "").includes("not found"))).toBe(true);
  }, 120_000);
});

describe("a kubelet restart", () => {
  it("kill -9 of the kubelet leaves its containers running; the next kubelet adopts them", async () => {
    await pods().create(pod("keep", [{ name: "app", image: "course/sleeper:1.0" }]));
    const before = await until("keep", (x) => !!x.status?.containerStatuses?.[0]?.state?.running, "running");
    const id = before.status?.containerStatuses?.[0]?.containerID;
    const containerId = (id ?? "").replace("process://", "");
    const pidOf = () => cluster.containerProcesses().find((c) => c.id === containerId)?.pid;
    const pid = pidOf();
    expect(pid).toBeDefined();
    const kubelet = cluster.kubelets.get("node-1");
    kubelet?.process.kill();
    await kubelet?.process.waitForExit();
    // The container outlives its kubelet, as containers outlive a containerd restart.
    expect(pidOf()).toBe(pid);
    await cluster.startKubelet("node-1");
    await cluster.waitForNodesReady(["node-1"]);
    // The new kubelet lists the runtime, finds the container and reports it; it starts no other.
    await eventually(
      async () =>
        (await cluster.kubectl(["logs", "keep"])).stdout.includes("sleeper: started") ? true : undefined,
      "logs through the new kubelet",
    );
    await new Promise((r) => setTimeout(r, 3000));
    const after = await getPod("keep");
    expect(after.status?.containerStatuses?.[0]?.containerID).toBe(id);
    expect(after.status?.containerStatuses?.[0]?.restartCount).toBe(0);
    expect(after.status?.containerStatuses?.[0]?.state?.running).toBeDefined();
    expect(pidOf()).toBe(pid);
  }, 120_000);
});
