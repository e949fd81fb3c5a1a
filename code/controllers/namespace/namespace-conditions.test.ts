import { describe, expect, it } from "vitest";
import type { Namespace } from "../../api/core.ts";
import { ErrGroupDiscoveryFailed } from "../../client/discovery/discovery-client.ts";
import { NamespaceConditionUpdater } from "./namespaced-resources-deleter.ts";

const ns = (): Namespace => ({
  apiVersion: "v1",
  kind: "Namespace",
  metadata: { name: "x" },
  status: { phase: "Terminating" },
});

describe("NamespaceConditionUpdater", () => {
  it("writes all five conditions False with upstream's ok reasons when nothing failed", () => {
    const n = ns();
    expect(new NamespaceConditionUpdater().update(n, "t0")).toBe(true);
    expect(n.status?.conditions?.map((c) => [c.type, c.status, c.reason])).toEqual([
      ["NamespaceDeletionDiscoveryFailure", "False", "ResourcesDiscovered"],
      ["NamespaceDeletionGroupVersionParsingFailure", "False", "ParsedGroupVersions"],
      ["NamespaceDeletionContentFailure", "False", "ContentDeleted"],
      ["NamespaceContentRemaining", "False", "ContentRemoved"],
      ["NamespaceFinalizersRemaining", "False", "ContentHasNoFinalizers"],
    ]);
    // The same outcome again changes nothing, so no status write is sent.
    expect(new NamespaceConditionUpdater().update(n, "t1")).toBe(false);
  });

  it("says which groups failed discovery and which deletes failed, sorted", () => {
    const n = ns();
    const u = new NamespaceConditionUpdater();
    u.processDiscoverResourcesErr(
      new ErrGroupDiscoveryFailed(new Map([["metrics.k8s.io/v1beta1", new Error("503")]])),
    );
    u.processDeleteContentErr(new Error("b failed"));
    u.processDeleteContentErr(new Error("a failed"));
    u.update(n, "t0");
    const byType = Object.fromEntries((n.status?.conditions ?? []).map((c) => [c.type, c]));
    expect(byType.NamespaceDeletionDiscoveryFailure).toMatchObject({
      status: "True",
      reason: "DiscoveryFailed",
      message:
        "Discovery failed for some groups, 1 failing: unable to retrieve the complete list of server APIs: metrics.k8s.io/v1beta1: 503",
    });
    expect(byType.NamespaceDeletionContentFailure).toMatchObject({
      status: "True",
      reason: "ContentDeletionFailed",
      message: "Failed to delete all resource types, 2 remaining: a failed, b failed",
    });
    // Fixed on a later pass: False again, with a new transition time.
    const again = new NamespaceConditionUpdater();
    expect(again.update(n, "t1")).toBe(true);
    expect(n.status?.conditions?.find((c) => c.type === "NamespaceDeletionDiscoveryFailure")).toMatchObject({
      status: "False",
      reason: "ResourcesDiscovered",
      lastTransitionTime: "t1",
    });
  });
});
