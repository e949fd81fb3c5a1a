// Seeded randomized runs through the sim: random zones and nodes (one without a zone label),
// random maxSkew / minDomains, matching and non-matching pods in random order — and after every
// run, no domain is more than maxSkew above the emptiest one. SEED=n replays a run.
import { describe, expect, it } from "vitest";
import type { TopologySpreadConstraint } from "../../../api/core.ts";
import { mulberry32 } from "../../../testing/random.ts";
import { newSim } from "../../testing/sim.ts";
import { makeNode, makePod } from "../../testing/wrappers.ts";

const ZONE = "topology.kubernetes.io/zone";
const HOST = "kubernetes.io/hostname";

describe("DoNotSchedule spreading, whatever the cluster", () => {
  it("never leaves a domain more than maxSkew above the minimum", async () => {
    const seed = Number(process.env.SEED ?? 20261201);
    const rand = mulberry32(seed);
    const int = (lo: number, hi: number) => lo + Math.floor(rand() * (hi - lo + 1));
    let totalBound = 0;
    for (let round = 0; round < 25; round++) {
      const ctx = `seed ${seed}, round ${round}`;
      const zones = Array.from({ length: int(2, 4) }, (_, i) => `z${i}`);
      const nodes = zones.flatMap((z) =>
        Array.from({ length: int(1, 3) }, (_, i) => makeNode(`${z}-n${i}`, { zone: z })),
      );
      nodes.push(makeNode("bare")); // no zone label: never a domain, never chosen
      const k = int(1, 3);
      const minDomains = rand() < 0.3 ? int(1, 5) : undefined;
      const withHost = rand() < 0.4;
      const hostSkew = int(1, 3);
      const constraints: TopologySpreadConstraint[] = [
        {
          maxSkew: k,
          topologyKey: ZONE,
          whenUnsatisfiable: "DoNotSchedule",
          labelSelector: { matchLabels: { app: "web" } },
          minDomains,
        },
        ...(withHost
          ? [
              {
                maxSkew: hostSkew,
                topologyKey: HOST,
                whenUnsatisfiable: "DoNotSchedule" as const,
                labelSelector: { matchLabels: { app: "web" } },
              },
            ]
          : []),
      ];
      const sim = newSim({ seed: seed + round, nodes });
      const n = int(10, 40);
      let webPods = 0;
      for (let i = 0; i < n; i++) {
        if (rand() < 0.25) {
          sim.add(makePod(`db${i}`, { labels: { app: "db" } }));
        } else {
          const p = makePod(`web${i}`, { labels: { app: "web" } });
          p.spec.topologySpreadConstraints = constraints;
          sim.add(p);
          webPods++;
        }
        // Sometimes let the scheduler catch up, sometimes queue several first.
        if (rand() < 0.5) await sim.drain();
      }
      await sim.drain();

      const web = sim.bound.filter((b) => b.pod.metadata.labels?.app === "web");
      totalBound += web.length;
      expect(
        web.some((b) => b.node === "bare"),
        `${ctx}: a pod landed on the node without a zone`,
      ).toBe(false);
      const perZone = new Map(zones.map((z) => [z, 0]));
      for (const b of web) perZone.set(b.node.split("-")[0], perZone.get(b.node.split("-")[0])! + 1);
      const counts = [...perZone.values()];
      const fewerDomains = minDomains !== undefined && zones.length < minDomains;
      // With fewer domains than minDomains the minimum is 0: no zone above maxSkew at all.
      const globalMin = fewerDomains ? 0 : Math.min(...counts);
      expect(
        Math.max(...counts) - globalMin,
        `${ctx}: zones ${JSON.stringify([...perZone])}, k ${k}`,
      ).toBeLessThanOrEqual(k);
      if (withHost) {
        const perHost = new Map(
          nodes.filter((x) => x.metadata.name !== "bare").map((x) => [x.metadata.name!, 0]),
        );
        for (const b of web) perHost.set(b.node, perHost.get(b.node)! + 1);
        const hc = [...perHost.values()];
        expect(
          Math.max(...hc) - Math.min(...hc),
          `${ctx}: hosts ${JSON.stringify([...perHost])}`,
        ).toBeLessThanOrEqual(hostSkew);
      }
      if (!withHost) {
        // The emptiest zone always fits one more (skew 1 ≤ k), so every pod is placed — unless
        // minDomains caps each zone at k, and then exactly min(pods, zones × k) are.
        const expected = fewerDomains ? Math.min(webPods, zones.length * k) : webPods;
        expect(web.length, `${ctx}: bound web pods`).toBe(expected);
      }
      // The db pods have no constraints: all of them land.
      expect(sim.bound.length - web.length, ctx).toBe(n - webPods);
    }
    expect(totalBound, `seed ${seed}`).toBeGreaterThan(200);
  });
});
