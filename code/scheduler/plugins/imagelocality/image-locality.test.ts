// ImageLocality: the score worked by hand from upstream's formula (size × spread, clamped to
// [23 MiB, 1000 MiB × containers], mapped onto 0–100), the cache's image counts, and a whole
// cycle preferring the node that has the image.
import { describe, expect, it } from "vitest";
import type { Pod } from "../../../api/core.ts";
import { prioritizeNodes } from "../../find-nodes.ts";
import { CycleState } from "../../framework/cycle-state.ts";
import { newSim } from "../../testing/sim.ts";
import { makeNode, makePod } from "../../testing/wrappers.ts";
import {
  calculatePriority,
  maxContainerThreshold,
  minThreshold,
  normalizedImageName,
} from "./image-locality.ts";

const MiB = 1024 * 1024;
const withImages = (pod: Pod, ...images: string[]): Pod => ({
  ...pod,
  spec: { ...pod.spec, containers: images.map((image, i) => ({ name: `c${i}`, image })) },
});
const app = { names: ["registry.example/app:v1"], sizeBytes: 500 * MiB };
const nginx = { names: ["nginx:latest", "nginx@sha256:abc"], sizeBytes: 100 * MiB };
const cluster = () => [
  makeNode("a", { images: [app, nginx] }),
  makeNode("b", { images: [app] }),
  makeNode("c"),
];

describe("ImageLocality helpers", () => {
  it("adds :latest only to an untagged name (a registry port is not a tag)", () => {
    expect(normalizedImageName("nginx")).toBe("nginx:latest");
    expect(normalizedImageName("nginx:1.27")).toBe("nginx:1.27");
    expect(normalizedImageName("localhost:5000/app")).toBe("localhost:5000/app:latest");
  });

  it("clamps the sum to [23 MiB, 1000 MiB × containers]", () => {
    expect(calculatePriority(0, 1)).toBe(0);
    expect(calculatePriority(minThreshold, 1)).toBe(0);
    expect(calculatePriority(5000 * MiB, 1)).toBe(100);
    // two containers: 100 × (1000 − 23) / (2000 − 23) MiB = 97700 / 1977 = 49.4 → 49
    expect(calculatePriority(maxContainerThreshold, 2)).toBe(49);
  });
});

describe("ImageLocality in whole scheduling cycles", () => {
  it("the cache counts, per image, the nodes that have it", () => {
    const sim = newSim({ nodes: cluster() });
    sim.cache.updateSnapshot(sim.sched.snapshot);
    const a = sim.sched.snapshot.get("a");
    if (a instanceof Error) throw a;
    expect(a.imageStates.get("registry.example/app:v1")).toEqual({ size: 500 * MiB, numNodes: 2 });
    expect(a.imageStates.get("nginx:latest")).toEqual({ size: 100 * MiB, numNodes: 1 });
  });

  it("scores by size × spread and prefers the node with the images", async () => {
    const sim = newSim({ nodes: cluster() });
    const pod = withImages(makePod("p"), "registry.example/app:v1", "nginx");
    sim.cache.updateSnapshot(sim.sched.snapshot);
    const state = new CycleState();
    sim.fwk.runPreFilterPlugins(state, pod);
    const scores = prioritizeNodes(sim.fwk, state, pod, sim.sched.snapshot.list());
    if (scores instanceof Error) throw scores;
    const il = Object.fromEntries(
      scores.map((s) => [s.name, s.scores.find((x) => x.name === "ImageLocality")?.score]),
    );
    // 3 nodes, 2 containers: max = 2000 MiB = 2097152000, min = 23 MiB = 24117248
    // a: app trunc(524288000 × 2/3) = 349525333, nginx trunc(104857600 × 1/3) = 34952533 → 384477866
    //    100 × (384477866 − 24117248) / (2097152000 − 24117248) = 36036061800 / 2073034752 = 17.38 → 17
    // b: app 349525333 → 100 × 325408085 / 2073034752 = 15.69 → 15
    // c: nothing → clamped to 23 MiB → 0
    expect(il).toEqual({ a: 17, b: 15, c: 0 });
    sim.add(pod);
    await sim.drain();
    expect(sim.bound.map((b) => b.node)).toEqual(["a"]);
  });
});
