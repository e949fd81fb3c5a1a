import { describe, expect, it } from "vitest";
import type { Pod } from "../api/core.ts";
import { FakeClock } from "../client/util/clock.ts";
import { Cache } from "./container/cache.ts";
import { calculateEffectiveGracePeriod, type PodSyncer, PodWorkers } from "./pod-workers.ts";
import { WorkQueue } from "./util/queue/work-queue.ts";

const newPod = (uid: string, extra: Partial<Pod["metadata"]> = {}, grace?: number): Pod => ({
  metadata: { name: uid, namespace: "default", uid, ...extra },
  spec: { containers: [{ name: "c", image: "img" }], terminationGracePeriodSeconds: grace },
});

/** A syncer that records calls and lets the test decide when each one returns. */
function recordingSyncer() {
  const calls: string[] = [];
  const gates = new Map<string, () => void>();
  let terminal = new Set<string>();
  let failing = new Set<string>();
  let active = 0;
  let maxActivePerPod = 0;
  const activeByPod = new Map<string, number>();
  const enter = (uid: string) => {
    const n = (activeByPod.get(uid) ?? 0) + 1;
    activeByPod.set(uid, n);
    maxActivePerPod = Math.max(maxActivePerPod, n);
    active++;
  };
  const leave = (uid: string) => {
    activeByPod.set(uid, (activeByPod.get(uid) ?? 1) - 1);
    active--;
  };
  const block = (key: string, signal: AbortSignal) =>
    new Promise<void>((resolve) => {
      gates.set(key, resolve);
      signal.addEventListener("abort", () => resolve(), { once: true });
    });
  const blocking = new Set<string>();
  const syncer: PodSyncer = {
    async syncPod(signal, type, pod) {
      const uid = pod.metadata.uid!;
      enter(uid);
      calls.push(`syncPod ${uid} ${type} ${pod.metadata.labels?.v ?? ""}`);
      if (blocking.has(uid)) await block(uid, signal);
      leave(uid);
      if (failing.has(uid)) throw new Error("boom");
      return terminal.has(uid);
    },
    async syncTerminatingPod(signal, pod, _s, grace) {
      const uid = pod.metadata.uid!;
      enter(uid);
      calls.push(`syncTerminatingPod ${uid} ${grace}`);
      if (blocking.has(uid)) await block(uid, signal);
      leave(uid);
    },
    async syncTerminatingRuntimePod(_signal, rp) {
      calls.push(`syncTerminatingRuntimePod ${rp.id}`);
    },
    async syncTerminatedPod(_signal, pod) {
      calls.push(`syncTerminatedPod ${pod.metadata.uid}`);
    },
  };
  return {
    syncer,
    calls,
    gates,
    blocking,
    get active() {
      return active;
    },
    get maxActivePerPod() {
      return maxActivePerPod;
    },
    setTerminal: (s: Set<string>) => {
      terminal = s;
    },
    setFailing: (s: Set<string>) => {
      failing = s;
    },
  };
}

function setup() {
  const clock = new FakeClock(1_000);
  const cache = new Cache();
  const workQueue = new WorkQueue(clock);
  const rec = recordingSyncer();
  const workers = new PodWorkers({
    podSyncer: rec.syncer,
    podCache: cache,
    workQueue,
    clock,
    random: () => 0.5,
  });
  /** A PLEG relist: the cache becomes newer than every sync so far; then let promises run. */
  const relist = async () => {
    clock.step(1);
    cache.updateTime(clock.now());
    for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
  };
  return { clock, cache, workQueue, rec, workers, relist };
}

describe("PodWorkers", () => {
  it("serializes one pod's updates (keeping only the newest) while other pods proceed", async () => {
    const { rec, workers, relist } = setup();
    rec.blocking.add("a");
    workers.updatePod({ updateType: "SyncPodCreate", pod: newPod("a", { labels: { v: "1" } }) });
    await relist();
    expect(rec.calls).toEqual(["syncPod a SyncPodCreate 1"]);
    // Two more updates while a's first sync is still running: only the last one will run.
    workers.updatePod({ updateType: "SyncPodUpdate", pod: newPod("a", { labels: { v: "2" } }) });
    workers.updatePod({ updateType: "SyncPodUpdate", pod: newPod("a", { labels: { v: "3" } }) });
    workers.updatePod({ updateType: "SyncPodCreate", pod: newPod("b") });
    await relist();
    expect(rec.calls).toContain("syncPod b SyncPodCreate ");
    expect(rec.active).toBe(1); // a is still in its first sync, b is done
    rec.blocking.delete("a");
    rec.gates.get("a")!();
    await relist();
    await relist();
    expect(rec.calls.filter((c) => c.startsWith("syncPod a"))).toEqual([
      "syncPod a SyncPodCreate 1",
      "syncPod a SyncPodUpdate 3",
    ]);
    expect(rec.maxActivePerPod).toBe(1);
  });

  it("waits for a runtime status newer than its last sync before syncing again", async () => {
    const { rec, workers, relist, clock } = setup();
    workers.updatePod({ updateType: "SyncPodCreate", pod: newPod("a") });
    await relist();
    expect(rec.calls.length).toBe(1);
    workers.updatePod({ updateType: "SyncPodSync", pod: newPod("a") });
    clock.step(5); // time passes, but no relist: the cache is older than the last sync
    for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
    expect(rec.calls.length).toBe(1);
    await relist();
    expect(rec.calls.length).toBe(2);
  });

  it("runs syncing → terminating → terminated once, then ignores the pod until it is forgotten", async () => {
    const { rec, workers, relist } = setup();
    const pod = newPod("a", {}, 42);
    workers.updatePod({ updateType: "SyncPodCreate", pod });
    await relist();
    rec.setTerminal(new Set(["a"])); // the pod's containers finished (restartPolicy Never)
    workers.updatePod({ updateType: "SyncPodSync", pod });
    await relist();
    await relist();
    await relist();
    expect(rec.calls).toEqual([
      "syncPod a SyncPodCreate ",
      "syncPod a SyncPodSync ",
      "syncTerminatingPod a 42",
      "syncTerminatedPod a",
    ]);
    await workers.waitIdle();
    expect(workers.podSyncStatuses.get("a")?.finished).toBe(true);
    expect(workers.couldHaveRunningContainers("a")).toBe(false);
    workers.updatePod({ updateType: "SyncPodSync", pod });
    await relist();
    expect(rec.calls.length).toBe(4);
    workers.syncKnownPods([pod]);
    expect(workers.podSyncStatuses.has("a")).toBe(true); // still in the config: kept
    workers.syncKnownPods([]);
    expect(workers.podSyncStatuses.has("a")).toBe(false);
  });

  it("never lengthens a grace period, and a shorter one cancels the termination in progress", async () => {
    const { rec, workers, relist } = setup();
    const pod = newPod("a", {}, 30);
    workers.updatePod({ updateType: "SyncPodCreate", pod });
    await relist();
    rec.blocking.add("a");
    workers.updatePod({ updateType: "SyncPodKill", pod });
    await relist();
    expect(rec.calls.at(-1)).toBe("syncTerminatingPod a 30");
    workers.updatePod({
      updateType: "SyncPodKill",
      pod,
      killPodOptions: { podTerminationGracePeriodSecondsOverride: 60 },
    });
    await relist();
    expect(workers.podSyncStatuses.get("a")?.gracePeriod).toBe(30);
    rec.blocking.delete("a");
    // A deletion with 5 s: the running SyncTerminatingPod is cancelled and runs again with 5.
    workers.updatePod({
      updateType: "SyncPodUpdate",
      pod: { ...pod, metadata: { ...pod.metadata, deletionTimestamp: "x", deletionGracePeriodSeconds: 5 } },
    });
    await relist();
    await relist();
    await relist();
    // The 60 s kill changed nothing; the 5 s deletion cancelled the blocked sync and ran again.
    expect(rec.calls.filter((c) => c.startsWith("syncTerminating"))).toEqual([
      "syncTerminatingPod a 30",
      "syncTerminatingPod a 5",
    ]);
    expect(workers.podSyncStatuses.get("a")?.deleted).toBe(true);
    expect(rec.calls.at(-1)).toBe("syncTerminatedPod a");
  });

  it("enqueues a pod after the resync interval on success and the backoff period on error", async () => {
    const { rec, workers, relist, clock, workQueue } = setup();
    workers.updatePod({ updateType: "SyncPodCreate", pod: newPod("ok") });
    rec.setFailing(new Set(["bad"]));
    workers.updatePod({ updateType: "SyncPodCreate", pod: newPod("bad") });
    await relist();
    // random 0.5 → resync 60 s × 1.25, backoff 10 s × 1.25.
    clock.step(12_500 - 1);
    expect(workQueue.getWork()).toEqual([]);
    clock.step(1);
    expect(workQueue.getWork()).toEqual(["bad"]);
    clock.step(75_000 - 12_500);
    expect(workQueue.getWork()).toEqual(["ok"]);
  });

  it("kills a runtime-only pod (an orphan) and then forgets it", async () => {
    const { rec, workers, relist } = setup();
    workers.updatePod({
      updateType: "SyncPodKill",
      runningPod: { id: "orphan", name: "x", namespace: "default", containers: [], sandboxes: [] },
    });
    await relist();
    await workers.waitIdle();
    expect(rec.calls).toEqual(["syncTerminatingRuntimePod orphan"]);
    expect(workers.podSyncStatuses.has("orphan")).toBe(false);
  });
});

describe("calculateEffectiveGracePeriod", () => {
  it("takes the shortest of current, API and override; the spec's when none; at least 1", () => {
    const pod = newPod("a", {}, 30);
    expect(calculateEffectiveGracePeriod(0, pod, undefined)).toEqual({ gracePeriod: 30, shortened: false });
    expect(calculateEffectiveGracePeriod(30, pod, { podTerminationGracePeriodSecondsOverride: 60 })).toEqual({
      gracePeriod: 30,
      shortened: false,
    });
    expect(
      calculateEffectiveGracePeriod(
        30,
        { ...pod, metadata: { ...pod.metadata, deletionGracePeriodSeconds: 10 } },
        undefined,
      ),
    ).toEqual({ gracePeriod: 10, shortened: true });
    // An override of 0 leaves nothing set, so the spec's value applies; a spec of 0 becomes 1.
    expect(calculateEffectiveGracePeriod(0, pod, { podTerminationGracePeriodSecondsOverride: 0 })).toEqual({
      gracePeriod: 30,
      shortened: false,
    });
    expect(calculateEffectiveGracePeriod(0, newPod("b", {}, 0), undefined)).toEqual({
      gracePeriod: 1,
      shortened: false,
    });
  });
});
