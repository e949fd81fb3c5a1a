// Seeded randomized interleaving: scheduling cycles, bind completions (some failing), late
// informer confirmations, deletions of bound pods and backoff flushes in random order — and
// no node is ever promised more than it has. SEED=n replays a run.
import { describe, expect, it } from "vitest";
import type { Pod } from "../api/core.ts";
import { mulberry32 } from "../testing/random.ts";
import { Snapshot } from "./backend/cache/snapshot.ts";
import { AssignedPodDelete } from "./framework/events.ts";
import { podRequests } from "./framework/types.ts";
import { newSim } from "./testing/sim.ts";
import { makeNode, makePod } from "./testing/wrappers.ts";

const flush = () => new Promise<void>((r) => setImmediate(r));

describe("no overcommit, whatever the interleaving", () => {
  it("keeps every node's bound and assumed pods within its allocatable", async () => {
    const seed = Number(process.env.SEED ?? 20261201);
    const rand = mulberry32(seed);
    const pick = <T>(xs: T[]): T => xs[Math.floor(rand() * xs.length)];
    const held: { pod: Pod; release: () => void }[] = [];
    const failing = new Set<string>();
    const alloc = { cpu: "2", memory: "4Gi", pods: "3" };
    const sim = newSim({
      seed,
      nodes: Array.from({ length: 6 }, (_, i) => makeNode(`n${i}`, { allocatable: alloc })),
      confirm: false,
      gate: (pod) => new Promise<void>((release) => held.push({ pod, release })),
      failBind: (pod) => (failing.has(pod.metadata.uid ?? "") ? new Error("conflict") : undefined),
    });
    for (let i = 0; i < 150; i++) {
      const cpu = `${100 * (1 + Math.floor(rand() * 10))}m`;
      const memory = `${128 * (1 + Math.floor(rand() * 8))}Mi`;
      sim.add(makePod(`p${i}`, { requests: [{ cpu, memory }], priority: Math.floor(rand() * 3) }));
      sim.clock.step(1);
    }
    const apiBound = new Map<string, Pod>();
    const unconfirmed: Pod[] = [];
    let seen = 0;
    let bindFailures = 0;
    let deletions = 0;

    const check = (step: number) => {
      for (; seen < sim.bound.length; seen++) {
        const b = sim.bound[seen].pod;
        apiBound.set(b.metadata.uid ?? "", b);
        unconfirmed.push(b);
      }
      const ctx = `seed ${seed}, step ${step}`;
      // The API server's view: what the scheduler actually bound.
      const perNode = new Map<string, { cpu: number; mem: number; n: number }>();
      for (const p of apiBound.values()) {
        const r = podRequests(p);
        const t = perNode.get(p.spec.nodeName!) ?? { cpu: 0, mem: 0, n: 0 };
        perNode.set(p.spec.nodeName!, { cpu: t.cpu + r.milliCPU, mem: t.mem + r.memory, n: t.n + 1 });
        // A bound pod is always in the cache (assumed or confirmed): its room cannot be handed out again.
        expect(sim.cache.getPod(p), `${ctx}: ${p.metadata.name} bound but not in the cache`).toBeDefined();
      }
      for (const [node, t] of perNode) {
        expect(t.cpu, `${ctx}: ${node} cpu`).toBeLessThanOrEqual(2000);
        expect(t.mem, `${ctx}: ${node} memory`).toBeLessThanOrEqual(4 * 1024 ** 3);
        expect(t.n, `${ctx}: ${node} pods`).toBeLessThanOrEqual(3);
      }
      // The scheduler's own view, assumed pods included.
      const s = new Snapshot();
      sim.cache.updateSnapshot(s);
      for (const ni of s.list()) {
        expect(ni.requested.milliCPU, `${ctx}: cache ${ni.nodeName()}`).toBeLessThanOrEqual(
          ni.allocatable.milliCPU,
        );
        expect(ni.pods.length, `${ctx}: cache ${ni.nodeName()} pods`).toBeLessThanOrEqual(3);
      }
    };

    for (let step = 0; step < 1500; step++) {
      const action = Math.floor(rand() * 5);
      if (action === 0 && sim.queue.activeQ.len() > 0) {
        await sim.sched.scheduleOne();
      } else if (action === 1 && held.length > 0) {
        const h = held.splice(Math.floor(rand() * held.length), 1)[0];
        if (rand() < 0.15) {
          failing.add(h.pod.metadata.uid ?? "");
          bindFailures++;
        } else failing.delete(h.pod.metadata.uid ?? "");
        h.release();
        await flush();
      } else if (action === 2 && unconfirmed.length > 0) {
        // The informer delivers the bound pod, late and in any order.
        const p = unconfirmed.splice(Math.floor(rand() * unconfirmed.length), 1)[0];
        if (apiBound.has(p.metadata.uid ?? "")) {
          expect(sim.cache.addPod(p), `seed ${seed}`).toBeUndefined();
          sim.queue.assignedPodAdded(p);
        }
      } else if (action === 3 && apiBound.size > 0 && rand() < 0.1) {
        // A confirmed bound pod is deleted; its room frees up.
        const confirmed = [...apiBound.values()].filter((p) => !unconfirmed.includes(p));
        if (confirmed.length > 0) {
          const p = pick(confirmed);
          apiBound.delete(p.metadata.uid ?? "");
          sim.pods.delete(p.metadata.uid ?? "");
          expect(sim.cache.removePod(p), `seed ${seed}`).toBeUndefined();
          sim.queue.moveAllToActiveOrBackoffQueue(AssignedPodDelete, p, undefined);
          deletions++;
        }
      } else if (action === 4) {
        sim.clock.step(1000);
        sim.queue.flushBackoffQCompleted();
      }
      check(step);
    }
    for (const h of held.splice(0)) h.release();
    await sim.sched.waitForBindings();
    check(1500);
    // The run exercised what it claims to.
    expect(sim.bound.length, `seed ${seed}`).toBeGreaterThan(30);
    expect(bindFailures, `seed ${seed}`).toBeGreaterThan(3);
    expect(deletions, `seed ${seed}`).toBeGreaterThan(3);
  });
});
