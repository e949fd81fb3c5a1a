import { describe, expect, it } from "vitest";
import type { KubeObject } from "../../../api/meta.ts";
import type { GroupVersionResource } from "../../../api/schema.ts";
import { mulberry32 } from "../../../testing/random.ts";
import { FakeControllerSource } from "../../testing/fake-controller-source.ts";
import { FakeClock } from "../../util/clock.ts";
import { gvrString, SharedInformerFactory } from "./informer-factory.ts";
import type { ListOptions } from "./listwatch.ts";

const pods: GroupVersionResource = { group: "", version: "v1", resource: "pods" };
const deployments: GroupVersionResource = { group: "apps", version: "v1", resource: "deployments" };
const obj = (kind: string, name: string): KubeObject => ({
  apiVersion: "v1",
  kind,
  metadata: { namespace: "ns", name },
});

describe("SharedInformerFactory", () => {
  it("shares one informer per resource, starts each once, and waits for their caches", async () => {
    const sources = new Map<string, FakeControllerSource>();
    const made: { resource: string; namespace: string; tweaked: ListOptions }[] = [];
    const factory = new SharedInformerFactory(
      (r, namespace, tweak) => {
        const s = new FakeControllerSource();
        s.add(obj(r.resource, "one"));
        sources.set(gvrString(r), s);
        const tweaked: ListOptions = {};
        tweak?.(tweaked);
        made.push({ resource: gvrString(r), namespace, tweaked });
        return s;
      },
      0,
      {
        namespace: "ns",
        tweakListOptions: (o) => {
          o.labelSelector = "app=web";
        },
        transform: (o) => ({ ...o, transformed: true }),
        clock: new FakeClock(),
        random: mulberry32(5),
      },
    );
    const a = factory.informerFor(pods);
    expect(factory.informerFor({ ...pods })).toBe(a);
    const ctl = new AbortController();
    try {
      factory.start(ctl.signal);
      factory.informerFor(deployments);
      factory.start(ctl.signal); // starts only the new one
      const synced = await factory.waitForCacheSync(ctl.signal);
      expect([...synced.entries()]).toEqual([
        ["core/v1/pods", true],
        ["apps/v1/deployments", true],
      ]);
      expect(made).toEqual([
        { resource: "core/v1/pods", namespace: "ns", tweaked: { labelSelector: "app=web" } },
        { resource: "apps/v1/deployments", namespace: "ns", tweaked: { labelSelector: "app=web" } },
      ]);
      expect(sources.get("core/v1/pods")!.listCalls.length).toBe(1);
      const lister = factory.lister(pods);
      expect(lister.byNamespace("ns").get("one")?.transformed).toBe(true);
    } finally {
      ctl.abort();
      await factory.shutdown();
    }
    expect(a.isStopped()).toBe(true);
  });

  it("waitForCacheSync says false when stopped before the caches fill", async () => {
    const clock = new FakeClock();
    const factory = new SharedInformerFactory(
      () => ({
        list: () => new Promise(() => {}), // a server that never answers
        watch: () => new Promise(() => {}),
      }),
      0,
      { clock },
    );
    factory.informerFor(pods);
    const ctl = new AbortController();
    factory.start(ctl.signal);
    const waiting = factory.waitForCacheSync(ctl.signal);
    clock.step(1000);
    ctl.abort();
    expect([...(await waiting).values()]).toEqual([false]);
  });
});
