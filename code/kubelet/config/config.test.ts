import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it, vi } from "vitest";
import type { Pod } from "../../api/core.ts";
import { FakeClock } from "../../client/util/clock.ts";
import type { PodUpdate } from "../types/pod-update.ts";
import { applyDefaults } from "./common.ts";
import { PodConfig } from "./config.ts";
import { extractFromPath, newSourceFile } from "./file.ts";

const pod = (uid: string, extra: Partial<Pod> = {}): Pod => ({
  metadata: { name: uid, namespace: "default", uid },
  spec: { containers: [{ name: "c", image: "img" }] },
  ...extra,
});

describe("PodConfig.merge", () => {
  it("turns each SET into REMOVE, ADD, UPDATE, DELETE and RECONCILE, keeping first-seen", () => {
    const clock = new FakeClock(Date.parse("2026-03-01T00:00:00Z"));
    const config = new PodConfig(clock);
    const got: PodUpdate[] = [];
    config.onUpdate((u) => got.push(u));
    const set = (pods: Pod[]) => config.channel("api")({ pods, op: "SET", source: "api" });

    expect(config.seenAllSources(["api"])).toBe(false);
    set([]);
    expect(got.map((u) => [u.op, u.pods.length])).toEqual([["ADD", 0]]); // the source is now seen
    expect(config.seenAllSources(["api"])).toBe(true);

    got.length = 0;
    set([pod("a"), pod("b"), pod("c")]);
    expect(got.map((u) => [u.op, u.pods.map((p) => p.metadata.uid)])).toEqual([["ADD", ["a", "b", "c"]]]);
    expect(got[0].pods[0].metadata.annotations).toEqual({
      "kubernetes.io/config.source": "api",
      "kubernetes.io/config.seen": "2026-03-01T00:00:00.000Z",
    });

    got.length = 0;
    clock.step(1000);
    set([
      pod("a", { metadata: { name: "a", namespace: "default", uid: "a", labels: { x: "1" } } }),
      pod("b", {
        metadata: {
          name: "b",
          namespace: "default",
          uid: "b",
          deletionTimestamp: "t",
          deletionGracePeriodSeconds: 30,
        },
      }),
      pod("c", { status: { phase: "Unknown" } }),
    ]);
    set([pod("a", { metadata: { name: "a", namespace: "default", uid: "a", labels: { x: "1" } } })]);
    expect(got.map((u) => [u.op, u.pods.map((p) => p.metadata.uid)])).toEqual([
      ["UPDATE", ["a"]],
      ["DELETE", ["b"]],
      ["RECONCILE", ["c"]],
      ["REMOVE", ["b", "c"]],
    ]);
    expect(got[0].pods[0].metadata.annotations?.["kubernetes.io/config.seen"]).toBe(
      "2026-03-01T00:00:00.000Z",
    );
  });

  it("copies and compares only the pods whose object changed since the previous SET", () => {
    const config = new PodConfig(new FakeClock(0));
    const got: PodUpdate[] = [];
    config.onUpdate((u) => got.push(u));
    const set = (pods: Pod[]) => config.channel("api")({ pods, op: "SET", source: "api" });
    // As the reflector's store: one object per pod, replaced by a new object when the pod changes.
    const pods = Array.from({ length: 30 }, (_, i) => pod(`p${i}`));
    set(pods);
    expect(got.map((u) => [u.op, u.pods.length])).toEqual([["ADD", 30]]);

    const copies = vi.spyOn(globalThis, "structuredClone");
    try {
      got.length = 0;
      pods[7] = pod("p7", { status: { phase: "Running" } });
      set([...pods]);
      expect(copies).toHaveBeenCalledTimes(1); // p7's new object, not the 29 unchanged ones
      expect(got.map((u) => [u.op, u.pods.map((p) => p.metadata.uid)])).toEqual([["RECONCILE", ["p7"]]]);

      // The same objects again: nothing changed, nothing sent, nothing copied.
      got.length = 0;
      set([...pods]);
      expect(copies).toHaveBeenCalledTimes(1);
      expect(got).toEqual([]);

      // An equal pod in a new object (a relist decodes every pod anew) is copied and compared.
      pods[3] = pod("p3");
      set([...pods]);
      expect(copies).toHaveBeenCalledTimes(2);
      expect(got).toEqual([]);
    } finally {
      copies.mockRestore();
    }
  });
});

describe("static pods", () => {
  it("applyDefaults: node-suffixed name, a content UID as hash annotation, NoExecute toleration", () => {
    const manifest: Pod = {
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "web" },
      spec: { containers: [{ name: "c", image: "img" }] },
    };
    const a = applyDefaults(manifest, "/etc/pods/web.yaml", "Node-1");
    expect(a.metadata.name).toBe("web-node-1");
    expect(a.metadata.namespace).toBe("default");
    expect(a.spec.nodeName).toBe("Node-1");
    expect(a.metadata.uid).toMatch(/^[0-9a-f]{32}$/);
    expect(a.metadata.annotations?.["kubernetes.io/config.hash"]).toBe(a.metadata.uid);
    expect(a.spec.tolerations).toEqual([{ operator: "Exists", effect: "NoExecute" }]);
    // Same content, same UID; another node, file or content: another UID.
    expect(applyDefaults(manifest, "/etc/pods/web.yaml", "Node-1").metadata.uid).toBe(a.metadata.uid);
    expect(applyDefaults(manifest, "/etc/pods/web.yaml", "node-2").metadata.uid).not.toBe(a.metadata.uid);
    const changed = { ...manifest, spec: { containers: [{ name: "c", image: "img2" }] } };
    expect(applyDefaults(changed, "/etc/pods/web.yaml", "Node-1").metadata.uid).not.toBe(a.metadata.uid);
  });

  it("the file source reads YAML and JSON manifests, skips bad and hidden files, rescans every 20 s", async () => {
    const dir = await mkdtemp(join(tmpdir(), "kubelet-manifests-"));
    try {
      await writeFile(
        join(dir, "a.yaml"),
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: a\nspec:\n  containers:\n  - name: c\n    image: img\n",
      );
      await writeFile(
        join(dir, "b.json"),
        JSON.stringify({
          apiVersion: "v1",
          kind: "Pod",
          metadata: { name: "b", namespace: "ns" },
          spec: { containers: [{ name: "c", image: "img" }] },
        }),
      );
      await writeFile(join(dir, "bad.yaml"), "kind: Service\nmetadata:\n  name: s\n");
      await writeFile(join(dir, ".hidden.yaml"), "kind: Pod\n");
      const errors: string[] = [];
      const pods = await extractFromPath(dir, "n1", (e) => errors.push(e.message));
      expect(pods.map((p) => `${p.metadata.namespace}/${p.metadata.name}`)).toEqual([
        "default/a-n1",
        "ns/b-n1",
      ]);
      expect(errors).toEqual([`${join(dir, "bad.yaml")}: invalid pod: kind is "Service", want "Pod"`]);

      const clock = new FakeClock(0);
      const abort = new AbortController();
      const sets: number[] = [];
      const done = newSourceFile(dir, "n1", (u) => sets.push(u.pods.length), abort.signal, { clock });
      for (let i = 0; i < 1000 && sets.length < 1; i++) await new Promise((r) => setTimeout(r, 10));
      expect(sets).toEqual([2]);
      expect(clock.nextDue()).toBe(20_000);
      await rm(join(dir, "a.yaml"));
      clock.step(20_000);
      for (let i = 0; i < 1000 && sets.length < 2; i++) await new Promise((r) => setTimeout(r, 10));
      expect(sets).toEqual([2, 1]);
      abort.abort();
      await done;
      expect(clock.hasWaiters()).toBe(false);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("a missing directory still counts as seen: an empty SET", async () => {
    const errors: string[] = [];
    expect(await extractFromPath("/nonexistent/kubelet-test", "n1", (e) => errors.push(e.message))).toEqual(
      [],
    );
    expect(errors).toEqual(["path does not exist, ignoring: /nonexistent/kubelet-test"]);
  });
});
