import { describe, expect, it } from "vitest";
import type { Pod } from "../../api/core.ts";
import { FakeClock } from "../../client/util/clock.ts";
import { newBackOff } from "../../client/util/flowcontrol/backoff.ts";
import { Cache, emptyPodStatus } from "../container/cache.ts";
import { FakeRuntime } from "../container/testing/fake-runtime.ts";
import { GenericPLEG, generateEvents, type PodLifecycleEvent } from "./generic.ts";

const pod = (uid: string, ...containers: string[]): Pod => ({
  metadata: { name: uid, namespace: "default", uid },
  spec: { containers: containers.map((name) => ({ name, image: "img" })), restartPolicy: "Never" },
});

describe("generateEvents", () => {
  it("maps each transition as upstream, at most two events", () => {
    const t = (o: Parameters<typeof generateEvents>[2], n: Parameters<typeof generateEvents>[3]) =>
      generateEvents("p", "c", o, n).map((e) => e.type);
    expect(t("running", "running")).toEqual([]);
    expect(t("non-existent", "running")).toEqual(["ContainerStarted"]);
    expect(t("running", "exited")).toEqual(["ContainerDied"]);
    expect(t("running", "unknown")).toEqual(["ContainerChanged"]);
    expect(t("exited", "non-existent")).toEqual(["ContainerRemoved"]);
    expect(t("running", "non-existent")).toEqual(["ContainerDied", "ContainerRemoved"]);
  });
});

describe("GenericPLEG.relist", () => {
  it("emits started, died and removed, and inspects only pods that changed", async () => {
    const clock = new FakeClock(1_000);
    const runtime = new FakeRuntime(clock);
    const cache = new Cache();
    const pleg = new GenericPLEG({ runtime, cache, clock });
    const events: PodLifecycleEvent[] = [];
    pleg.watch((e) => events.push(e));
    let inspected = 0;
    const getPodStatus = runtime.getPodStatus.bind(runtime);
    runtime.getPodStatus = (...a) => {
      inspected++;
      return getPodStatus(...a);
    };

    await runtime.syncPod(pod("a", "web"), emptyPodStatus("a"), newBackOff(1, 1, clock));
    await pleg.relist();
    expect(events.map((e) => [e.id, e.type])).toEqual([["a", "ContainerStarted"]]);
    expect(inspected).toBe(1);
    expect(cache.get("a").status.containerStatuses.map((c) => c.state)).toEqual(["running"]);

    clock.step(1000);
    await pleg.relist(); // nothing changed: no event, no inspection
    expect(events.length).toBe(1);
    expect(inspected).toBe(1);

    runtime.exitContainer("a", "web", 1);
    clock.step(1000);
    await pleg.relist();
    expect(events.slice(1).map((e) => e.type)).toEqual(["ContainerDied"]);
    expect(cache.get("a").status.containerStatuses[0].exitCode).toBe(1);

    await runtime.removeTerminatedPod("a");
    clock.step(1000);
    await pleg.relist();
    expect(events.slice(2).map((e) => e.type)).toEqual(["ContainerRemoved"]);
    expect(cache.get("a").status.containerStatuses).toEqual([]); // forgotten
  });

  it("answers a waiting worker once a relist is newer than its last sync", async () => {
    const clock = new FakeClock(5_000);
    const runtime = new FakeRuntime(clock);
    const cache = new Cache();
    const pleg = new GenericPLEG({ runtime, cache, clock });
    let got: unknown;
    const waiting = cache.getNewerThan("x", 5_000).then((d) => {
      got = d;
    });
    await pleg.relist(); // at 5000: not newer than 5000
    await Promise.resolve();
    expect(got).toBeUndefined();
    clock.step(1);
    await pleg.relist();
    await waiting;
    expect(got).toMatchObject({ status: { id: "x", containerStatuses: [] } });
  });

  it("relists every second until stopped, leaving no timer", async () => {
    const clock = new FakeClock(0);
    const runtime = new FakeRuntime(clock);
    let lists = 0;
    const getPods = runtime.getPods.bind(runtime);
    runtime.getPods = (all) => {
      lists++;
      return getPods(all);
    };
    const pleg = new GenericPLEG({ runtime, cache: new Cache(), clock });
    pleg.start();
    await new Promise((r) => setImmediate(r));
    expect(lists).toBe(1);
    expect(clock.nextDue()).toBe(1000);
    clock.step(1000);
    await new Promise((r) => setImmediate(r));
    expect(lists).toBe(2);
    expect(pleg.healthy().ok).toBe(true);
    await pleg.stop();
    expect(clock.hasWaiters()).toBe(false);
  });
});
