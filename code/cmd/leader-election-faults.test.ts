/**
 * Chapter 6, faults on purpose, with the API server as witness: kube-apiserver as its own process
 * (on disk, restartable), kube-scheduler candidates as processes, each with its own credential, so
 * the audit log says which process wrote each Lease update and each binding (testing/
 * ha-control-plane.ts, testing/leader-witness.ts). Short durations: lease 2 s, renew deadline
 * 1.5 s, retry 0.5 s.
 * - the API server down for longer than the renew deadline: the leader stops (exit 1,
 *   "Leaderelection lost"), and after the restart a candidate leads again;
 * - a leader frozen with SIGSTOP past its lease, then resumed: a follower has taken over; the
 *   stale one finds the Lease held by another and, after its renew deadline, exits. client-go is not fencing: between waking and
 *   giving up it may still bind pods. The test measures that window and holds it to upstream's
 *   bound (renewDeadline after waking, plus a request in flight), and checks what *is* fenced:
 *   no pod is bound twice (the second binding gets 409) and no stale Lease renewal lands.
 * - a seeded randomized run: kill -9 (the slot restarted, as a kubelet restarts a static pod),
 *   SIGSTOP/SIGCONT, a partition of one candidate, an API server restart and `kubectl delete
 *   lease`'s equivalent, one after another; after each, the witness checks the invariants and a
 *   leader must be back. `EVENTS=300` runs the long version, `SEED=…` replays a run; the seed is
 *   printed first, and in every failure message.
 * Figures are printed; time is asserted only as that bound, with room for a loaded machine.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mulberry32 } from "../testing/random.ts";
import { waitFor } from "../testing/wait-for.ts";
import { HAControlPlane, type SchedulerProcess } from "./testing/ha-control-plane.ts";
import { summary, type Witnessed, witness } from "./testing/leader-witness.ts";

const durations = { lease: 2_000, renew: 1_500, retry: 500 };
/**
 * How long after waking a stale leader may still act, upstream's design: the renewal in progress
 * (or the next, at most one retry period away) keeps retrying a lost lock until renewDeadline; a
 * request already sent may land after that, within the lock client's timeout (max(1 s,
 * renewDeadline / 2)). Plus 2 s for a loaded machine (timers fire late, not early).
 */
const staleBound = durations.renew + durations.retry + 1_000 + 2_000;

/** Creates a pod every `everyMs` in `namespace` until stopped; failures (API server down) are skipped. */
function podCreator(cp: HAControlPlane, namespace: string, everyMs = 100) {
  let n = 0;
  let stopped = false;
  const done = (async () => {
    while (!stopped) {
      await cp.createPods(namespace, "p", n, 1).then(
        () => n++,
        () => undefined,
      );
      await new Promise((r) => setTimeout(r, everyMs));
    }
  })();
  return {
    count: () => n,
    stop: async () => {
      stopped = true;
      await done;
    },
  };
}

describe("leader election faults, witnessed by the API server's audit log", () => {
  let cp: HAControlPlane | undefined;
  afterAll(async () => {
    await cp?.close();
  });

  async function leader(within: SchedulerProcess[]): Promise<SchedulerProcess> {
    const id = await waitFor(
      "a candidate to hold the Lease",
      async () => {
        const h = await cp?.holder();
        return within.some((s) => s.identity === h) && h;
      },
      30_000,
    );
    return within.find((s) => s.identity === id) as SchedulerProcess;
  }

  describe("the API server stopped past the renew deadline, then restarted", () => {
    beforeAll(async () => {
      cp = await HAControlPlane.start({ durations, leaseName: "kube-scheduler" });
      await cp.seed("restart");
    });

    it("the leader exits with Leaderelection lost; after the restart a candidate leads again", async () => {
      if (!cp) throw new Error("no control plane");
      const c = cp;
      const all = [await c.startScheduler(0), await c.startScheduler(1)];
      const l = await leader(all);
      const f = all.find((s) => s !== l) as SchedulerProcess;
      await c.createPods("restart", "before", 0, 3);
      await c.allBound("restart");

      // Down: the leader's renewals fail (connection refused through its proxy) until its renew
      // deadline passes; then it stops leading and exits 1 — before any follower could lead.
      const down = Date.now();
      await c.killAPIServer();
      expect(await l.process.waitForExit(30_000), l.process.stderr().slice(-3000)).toBe(1);
      const exited = Date.now() - down;
      expect(l.process.stderr()).toContain('E "Leaderelection lost"');
      expect(f.process.child.exitCode).toBeNull();

      // Up again on the same port with the same data: the Lease still names the old leader, with
      // the bytes the follower saw last; its own clock says they are older than the lease, so it
      // takes over at its next try.
      await c.startAPIServer();
      const up = Date.now();
      await waitFor("the follower to lead", async () => (await c.holder()) === f.identity, 30_000);
      const recovered = Date.now() - up;
      await c.createPods("restart", "after", 0, 3);
      await c.allBound("restart");

      const w = witness(c.audit(), "kube-scheduler");
      console.log(
        `API server down ${exited} ms → leader exited (bound: renewDeadline ${durations.renew} ms + a request timeout); ` +
          `restart → follower leads in ${recovered} ms (about one retryPeriod ${durations.retry} ms); ${summary(w)}`,
      );
      // The old leader's term, then the follower's last. (At these sub-second periods a follower
      // may also take over spuriously: the record's bytes carry whole seconds, so it can see no
      // change for longer than the lease while the leader renews. Hence no exact list.)
      expect(w.terms[0]?.identity).toBe(l.identity);
      expect(w.terms.at(-1)?.identity).toBe(f.identity);
      expect(w.fencingViolations).toEqual([]);
      expect(w.doubleBound).toEqual([]);
      expect(w.staleBindings).toEqual([]);
      expect([...w.bindings.values()].flat().filter((b) => b.uid === f.uid)).toHaveLength(3);
    }, 180_000);

    afterAll(async () => {
      await cp?.close();
      cp = undefined;
    });
  });

  describe("a leader frozen with SIGSTOP past its lease, then resumed", () => {
    beforeAll(async () => {
      cp = await HAControlPlane.start({ durations, leaseName: "kube-scheduler" });
      await cp.seed("stale");
    });

    it("a follower takes over; the stale leader exits after its renew deadline, acting at most that long after waking", async () => {
      if (!cp) throw new Error("no control plane");
      const c = cp;
      const all = [await c.startScheduler(0), await c.startScheduler(1), await c.startScheduler(2)];
      const old = await leader(all);
      const creator = podCreator(c, "stale");
      try {
        await waitFor(
          "the leader to bind",
          async () => witness(c.audit(), "kube-scheduler").bindings.size >= 5,
        );

        // Freeze it: its timers stop with it, so it neither renews nor gives up. A follower waits
        // out the lease on its own clock, takes over and binds.
        old.process.child.kill("SIGSTOP");
        const stopped = Date.now();
        const next = await leader(all.filter((s) => s !== old));
        const tookOver = Date.now() - stopped;
        await waitFor("the new leader to bind", async () =>
          [...witness(c.audit(), "kube-scheduler").bindings.values()].flat().some((b) => b.uid === next.uid),
        );

        // Wake it: its renewal finds the Lease moved on and keeps trying until renewDeadline (if
        // it woke inside a renewal whose deadline passed during the stop, it gives up at once),
        // then exits. Meanwhile its scheduling loop still runs, on a cache that missed the stop.
        old.process.child.kill("SIGCONT");
        const woke = Date.now();
        expect(await old.process.waitForExit(30_000)).toBe(1);
        const exited = Date.now() - woke;
        expect(old.process.stderr()).toContain('E "Leaderelection lost"');
        await creator.stop();
        await c.allBound("stale");

        const w = witness(c.audit(), "kube-scheduler");
        const stale = w.staleBindings.map((b) => ({ ...b, sinceWake: b.at - woke }));
        const refusedAfterWake = (w.failedLeaseWrites.get(old.uid) ?? []).filter((t) => t >= woke);
        console.log(
          `SIGSTOP: follower led ${tookOver} ms after the stop (leaseDuration + retryPeriod ≈ ${durations.lease + durations.retry} ms); ` +
            `SIGCONT → stale leader exited in ${exited} ms; ${refusedAfterWake.length} Lease writes of it refused (409); ` +
            `${stale.length} stale bindings, the last ${Math.max(0, ...stale.filter((s) => s.uid === old.uid).map((s) => s.sinceWake))} ms after waking ` +
            `(bound ${staleBound} ms); ${summary(w)}; ${creator.count()} pods`,
        );
        // Fenced: the Lease (resourceVersion), and each pod (a bound pod refuses another binding).
        expect(w.fencingViolations).toEqual([]);
        expect(w.doubleBound).toEqual([]);
        // It gave up on its own deadline: its clock says its lease ran out while it slept, so it
        // skips the optimistic write and reads (GET, not audited); the Lease names another, so it
        // waits — and retries until renewDeadline, leading all the while (upstream's renew loop).
        expect(old.process.stderr()).toContain(
          'I "failed to renew lease kube-system/kube-scheduler: context deadline exceeded"',
        );
        expect(w.terms[0]?.uid).toBe(old.uid);
        expect(w.terms.filter((t) => t.uid === old.uid)).toHaveLength(1);
        // Not fenced: the stale leader's bindings, but only by it, and only within the bound.
        for (const s of stale) {
          expect(s.sinceTermEnd, `${s.uid} bound ${s.pod} without ever leading`).toBeDefined();
          if (s.uid !== old.uid) {
            // The loser of a spurious takeover (see the restart test): bounded from its term's end.
            expect(s.sinceTermEnd).toBeLessThanOrEqual(staleBound);
            continue;
          }
          expect(s.sinceWake).toBeGreaterThanOrEqual(-50); // not while it was frozen
          expect(s.sinceWake).toBeLessThanOrEqual(staleBound);
        }
      } finally {
        await creator.stop();
      }
    }, 180_000);

    afterAll(async () => {
      await cp?.close();
      cp = undefined;
    });
  });

  describe("a seeded randomized run of faults across three schedulers and the API server", () => {
    const seed = Number(process.env.SEED ?? Math.floor(Math.random() * 2 ** 31));
    const events = Number(process.env.EVENTS ?? 10);
    beforeAll(async () => {
      cp = await HAControlPlane.start({ durations, leaseName: "kube-scheduler" });
      await cp.seed("random");
    });
    afterAll(async () => {
      await cp?.close();
      cp = undefined;
    });

    it(`${events} faults (SEED=${seed} EVENTS=${events} replays them); invariants after each; a leader is back within the bound`, async () => {
      if (!cp) throw new Error("no control plane");
      const c = cp;
      console.log(`randomized leader-election faults: SEED=${seed} EVENTS=${events}`);
      const rand = mulberry32(seed);
      const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)] as T;
      const t0 = Date.now();
      const slots = [0, 1, 2];
      const current = new Map<number, SchedulerProcess>();
      for (const slot of slots) current.set(slot, await c.startScheduler(slot));
      /** When a process was woken or reconnected (SIGCONT, partition healed, API server back, Lease deleted). */
      const wakes: { uid?: string; at: number }[] = [];
      const kinds = ["kill", "stop", "partition", "apiserver", "delete"] as const;
      const counts: Record<string, number> = {};
      const regained: number[] = [];
      let worstStale = 0;
      const creator = podCreator(c, "random", 200);
      const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
      const fail = (step: number, what: string) => `SEED=${seed} step ${step}: ${what}`;

      const check = (step: number): Witnessed => {
        const w = witness(c.audit(), "kube-scheduler");
        expect(w.fencingViolations, fail(step, "a renewal landed on another holder's write")).toEqual([]);
        expect(w.doubleBound, fail(step, "a pod bound twice")).toEqual([]);
        for (const b of w.staleBindings) {
          expect(b.sinceTermEnd, fail(step, `${b.uid} bound ${b.pod} without ever leading`)).toBeDefined();
          const termEnd = b.at - (b.sinceTermEnd ?? 0);
          const woke = Math.max(
            termEnd,
            ...wakes.filter((x) => (x.uid === undefined || x.uid === b.uid) && x.at <= b.at).map((x) => x.at),
          );
          worstStale = Math.max(worstStale, b.at - woke);
          expect(
            b.at - woke,
            fail(step, `${b.uid} bound ${b.pod} ${b.at - woke} ms after it could know`),
          ).toBeLessThanOrEqual(staleBound);
        }
        return w;
      };

      try {
        for (let step = 0; step < events; step++) {
          const holder = await c.holder();
          const running = slots.map((s) => current.get(s) as SchedulerProcess);
          const target = (rand() < 0.7 && running.find((s) => s.identity === holder)) || pick(running);
          const kind = pick(kinds);
          const dur = Math.round(300 + rand() * 2_700);
          counts[kind] = (counts[kind] ?? 0) + 1;
          console.log(
            `step ${step}: ${kind} ${kind === "apiserver" || kind === "delete" ? "" : `slot ${target.slot}${target.identity === holder ? " (leader)" : ""} `}for ${dur} ms`,
          );
          switch (kind) {
            case "kill":
              target.process.child.kill("SIGKILL");
              await target.process.waitForExit();
              await sleep(dur);
              break;
            case "stop":
              target.process.child.kill("SIGSTOP");
              await sleep(dur);
              target.process.child.kill("SIGCONT");
              wakes.push({ uid: target.uid, at: Date.now() });
              break;
            case "partition":
              target.proxy.drop();
              await sleep(dur);
              target.proxy.pass();
              wakes.push({ uid: target.uid, at: Date.now() });
              break;
            case "apiserver":
              await c.killAPIServer();
              await sleep(dur);
              await c.startAPIServer();
              wakes.push({ at: Date.now() });
              break;
            case "delete":
              wakes.push({ at: Date.now() });
              await c.client.coordinationV1
                .leases("kube-system")
                .delete("kube-scheduler")
                .catch(() => undefined);
              await sleep(dur);
              break;
          }
          // The faults have stopped. The supervisor: a slot whose process exited (killed, or lost
          // its lease) starts again — the two others are running meanwhile, so it is not awaited
          // before a leader is.
          const healed = Date.now();
          const podsBefore = creator.count();
          const exited = (s: SchedulerProcess) =>
            s.process.child.exitCode !== null || s.process.child.signalCode !== null;
          const restarts = slots
            .filter((slot) => exited(current.get(slot) as SchedulerProcess))
            .map(async (slot) => current.set(slot, await c.startScheduler(slot)));
          // A running candidate holds the Lease again, and schedules: a pod created after the
          // faults stopped is bound.
          await waitFor(
            fail(step, "a leader after the faults stopped"),
            async () => {
              const h = await c.holder();
              return slots.some((s) => current.get(s)?.identity === h);
            },
            30_000,
          );
          regained.push(Date.now() - healed);
          await Promise.all(restarts);
          await waitFor(
            fail(step, "a pod created after the faults to be bound"),
            async () => (await c.client.coreV1.pods("random").get(`p-${podsBefore}`)).spec.nodeName,
            30_000,
          );
          check(step);
        }
        await creator.stop();
        await c.allBound("random");
        const w = check(events);
        const mean = Math.round(regained.reduce((a, b) => a + b, 0) / Math.max(1, regained.length));
        console.log(
          `randomized run SEED=${seed}: ${events} faults ${JSON.stringify(counts)} in ${Math.round((Date.now() - t0) / 1000)} s; ` +
            `${c.schedulers.length} scheduler processes; leader back after each in max ${Math.max(...regained)} ms, mean ${mean} ms ` +
            `(bound leaseDuration + retryPeriod × 2.2 = ${durations.lease + durations.retry * 2.2} ms); worst stale binding ${worstStale} ms after its process could know ` +
            `(bound ${staleBound} ms); ${summary(w)}; ${creator.count()} pods`,
        );
      } finally {
        await creator.stop();
      }
    }, 3_600_000);
  });
});
