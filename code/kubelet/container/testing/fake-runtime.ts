/**
 * FakeRuntime — an in-memory kubecontainer.Runtime for the kubelet loop's tests: pods in, pod
 * statuses out, no sandboxes, no processes, no timers.
 * Mirrors kubernetes/kubernetes pkg/kubelet/container/testing/fake_runtime.go.
 *
 * Solves: the sync loop, pod workers, PLEG and status manager must be testable without the
 * runtime manager (kuberuntime) or any CRI. A test drives container state by hand (`exitContainer`)
 * and reads what the kubelet asked for (`calls`, `killed`).
 *
 * Invariants:
 * - syncPod starts every spec container that has no running instance and may (re)start under the
 *   pod's restartPolicy (Always; OnFailure after a non-zero exit; Never only the first time).
 * - killPod turns every running container of the pod into an exited one (exit code 137 unless the
 *   test set another) and records the grace period it was given.
 * - container IDs are `fake://<n>`, never reused.
 *
 * @upstream kubernetes/kubernetes pkg/kubelet/container/testing/fake_runtime.go (FakeRuntime)
 * @chapter 07-kubelet
 */

import type { Pod } from "../../../api/core.ts";
import { type Clock, realClock } from "../../../client/util/clock.ts";
import type { Backoff } from "../../../client/util/flowcontrol/backoff.ts";
import type { PodStatus, PodSyncResult, Runtime, RuntimePod, Status } from "../runtime.ts";

interface FakePod {
  uid: string;
  name: string;
  namespace: string;
  containers: Status[];
}

export class FakeRuntime implements Runtime {
  private pods = new Map<string, FakePod>();
  private seq = 0;
  /** Every call, as "<method> <namespace>/<name>" (tests assert on the order). */
  readonly calls: string[] = [];
  /** The grace period each killPod got, by pod UID. */
  readonly killed = new Map<string, number | undefined>();
  /** Set to make the next syncPod fail for a container: name → reason. */
  readonly failStart = new Map<string, string>();

  constructor(private readonly clock: Clock = realClock) {}

  type(): string {
    return "fake";
  }

  async getPods(all: boolean): Promise<RuntimePod[]> {
    const out: RuntimePod[] = [];
    for (const p of this.pods.values()) {
      const containers = p.containers
        .filter((c) => all || c.state === "running")
        .map((c) => ({
          id: c.id,
          name: c.name,
          image: c.image,
          imageID: c.imageID,
          hash: c.hash,
          state: c.state,
        }));
      if (containers.length === 0 && !all) continue;
      out.push({ id: p.uid, name: p.name, namespace: p.namespace, containers, sandboxes: [] });
    }
    return out;
  }

  async syncPod(pod: Pod, _podStatus: PodStatus, _backOff: Backoff): Promise<PodSyncResult> {
    const uid = pod.metadata.uid ?? "";
    this.calls.push(`syncPod ${pod.metadata.namespace}/${pod.metadata.name}`);
    let p = this.pods.get(uid);
    if (!p) {
      p = { uid, name: pod.metadata.name ?? "", namespace: pod.metadata.namespace ?? "", containers: [] };
      this.pods.set(uid, p);
    }
    const result: PodSyncResult = { syncResults: [] };
    for (const c of pod.spec.containers) {
      const mine = p.containers.filter((x) => x.name === c.name);
      const last = mine[mine.length - 1];
      if (last?.state === "running") continue;
      const policy = pod.spec.restartPolicy ?? "Always";
      if (last && (policy === "Never" || (policy === "OnFailure" && last.exitCode === 0))) continue;
      const failure = this.failStart.get(c.name);
      if (failure) {
        result.syncResults.push({
          action: "StartContainer",
          target: c.name,
          error: failure,
          message: `fake: ${failure}`,
        });
        continue;
      }
      const now = this.clock.now();
      p.containers.push({
        id: { type: "fake", id: String(++this.seq) },
        name: c.name,
        state: "running",
        createdAt: now,
        startedAt: now,
        finishedAt: 0,
        exitCode: 0,
        image: c.image ?? "",
        imageID: `fake-image:${c.image ?? ""}`,
        imageRef: `fake-image:${c.image ?? ""}`,
        hash: "0",
        restartCount: mine.length,
        reason: "",
        message: "",
      });
      result.syncResults.push({ action: "StartContainer", target: c.name, error: "", message: "" });
    }
    return result;
  }

  async killPod(pod: Pod | undefined, runningPod: RuntimePod, gracePeriodOverride?: number): Promise<void> {
    this.calls.push(`killPod ${runningPod.namespace}/${runningPod.name}`);
    this.killed.set(runningPod.id, gracePeriodOverride);
    const p = this.pods.get(runningPod.id);
    for (const c of p?.containers ?? []) {
      if (c.state === "running") this.finish(c, 137, "Error");
    }
    void pod;
  }

  async getPodStatus(uid: string, name: string, namespace: string): Promise<PodStatus> {
    const p = this.pods.get(uid);
    return {
      id: uid,
      name,
      namespace,
      ips: p ? ["10.0.0.1"] : [],
      // Newest first, as the runtime manager reports them.
      containerStatuses: p ? [...p.containers].reverse().map((c) => ({ ...c })) : [],
      sandboxStatuses: [],
      timeStamp: this.clock.now(),
    };
  }

  async removeTerminatedPod(uid: string): Promise<void> {
    const p = this.pods.get(uid);
    this.calls.push(`removeTerminatedPod ${p?.namespace}/${p?.name}`);
    if (p?.containers.every((c) => c.state !== "running")) this.pods.delete(uid);
  }

  /** Makes the pod's running container `name` exit with `exitCode` (a crash, or a job's end). */
  exitContainer(uid: string, name: string, exitCode: number): void {
    const c = this.pods.get(uid)?.containers.find((x) => x.name === name && x.state === "running");
    if (!c) throw new Error(`no running container ${name} in pod ${uid}`);
    this.finish(c, exitCode, exitCode === 0 ? "Completed" : "Error");
  }

  /** A container the kubelet did not start: a leftover from before a restart. */
  addRunningPod(uid: string, namespace: string, name: string, containerName: string): void {
    const now = this.clock.now();
    this.pods.set(uid, {
      uid,
      name,
      namespace,
      containers: [
        {
          id: { type: "fake", id: String(++this.seq) },
          name: containerName,
          state: "running",
          createdAt: now,
          startedAt: now,
          finishedAt: 0,
          exitCode: 0,
          image: "img",
          imageID: "fake-image:img",
          imageRef: "fake-image:img",
          hash: "0",
          restartCount: 0,
          reason: "",
          message: "",
        },
      ],
    });
  }

  runningContainers(uid: string): string[] {
    return (this.pods.get(uid)?.containers ?? []).filter((c) => c.state === "running").map((c) => c.name);
  }

  hasPod(uid: string): boolean {
    return this.pods.has(uid);
  }

  private finish(c: Status, exitCode: number, reason: string): void {
    c.state = "exited";
    c.exitCode = exitCode;
    c.reason = reason;
    c.finishedAt = this.clock.now();
  }
}
