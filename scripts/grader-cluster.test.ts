// Which test files need the grader's shared cluster, and how long each cluster exercise may run.
import { describe, expect, it } from "vitest";
import {
  clusterTimeLimitMs,
  needsCluster,
  ownClusterTimeLimitMs,
  usesGraderCluster,
} from "./grader-cluster.ts";
import { fileTimeLimitMs } from "./variants.ts";

const probes = "exercises/08-cluster/01-probe-tuning/probes.test.ts";
const diagnose = "exercises/08-cluster/03-diagnose/diagnose.test.ts";
const kubelet = "exercises/07-kubelet/06-node-health/node-health.test.ts";

describe("the grader's cluster", () => {
  it("is needed by the chapter-8 tests that call useGraderCluster, not by one that starts its own", () => {
    expect([probes, diagnose, kubelet].map(needsCluster)).toEqual([true, true, false]);
    expect([probes, diagnose, kubelet].map(usesGraderCluster)).toEqual([true, false, false]);
  });

  it("gives a file that starts its own cluster the longer time limit", () => {
    expect(fileTimeLimitMs(probes, 30_000)).toBe(clusterTimeLimitMs);
    expect(fileTimeLimitMs(diagnose, 30_000)).toBe(ownClusterTimeLimitMs);
    expect(fileTimeLimitMs(kubelet, 30_000)).toBe(30_000);
  });
});
