import { describe, expect, it } from "vitest";
import { StatusError } from "../errors.ts";
import {
  applyStrategicMergePatch,
  pruneAsDecoded,
  supportsStrategicMergePatch,
} from "./strategic-merge-patch.ts";

const pod = () => ({
  apiVersion: "v1",
  kind: "Pod",
  metadata: { name: "web", finalizers: ["a", "b"], labels: { app: "web" } },
  spec: {
    containers: [
      {
        name: "app",
        image: "nginx:1",
        env: [
          { name: "A", value: "1" },
          { name: "B", value: "2" },
        ],
        ports: [{ containerPort: 80 }, { containerPort: 443 }],
      },
      { name: "sidecar", image: "busybox" },
    ],
    volumes: [{ name: "cfg", configMap: { name: "cfg" } }],
    tolerations: [{ key: "k" }],
  },
});
type Pod = ReturnType<typeof pod>;

const patchPod = (patch: unknown) => applyStrategicMergePatch(pod(), patch, "v1", "Pod") as Pod;
const names = (list: { name: string }[]) => list.map((c) => c.name);

function statusOf(f: () => unknown): StatusError {
  try {
    f();
  } catch (e) {
    if (e instanceof StatusError) return e;
    throw e;
  }
  throw new Error("expected a StatusError");
}

describe("applyStrategicMergePatch: lists", () => {
  it("merges containers by name: one image changes, the sidecar stays", () => {
    const p = pod();
    const out = applyStrategicMergePatch(
      p,
      { spec: { containers: [{ name: "app", image: "nginx:2" }] } },
      "v1",
      "Pod",
    ) as Pod;
    expect(names(out.spec.containers)).toEqual(["app", "sidecar"]);
    expect(out.spec.containers[0]!.image).toBe("nginx:2");
    expect(out.spec.containers[0]!.env).toHaveLength(2);
    expect(p).toEqual(pod());
  });

  it("merges env by name and ports by containerPort, replaces untagged lists", () => {
    const out = patchPod({
      spec: {
        containers: [
          { name: "app", env: [{ name: "B", value: "20" }], ports: [{ containerPort: 443, name: "https" }] },
        ],
        tolerations: [{ key: "other" }],
      },
    });
    expect(out.spec.containers[0]!.env).toEqual([
      { name: "A", value: "1" },
      { name: "B", value: "20" },
    ]);
    expect(out.spec.containers[0]!.ports).toEqual([
      { containerPort: 80 },
      { containerPort: 443, name: "https" },
    ]);
    expect(out.spec.tolerations).toEqual([{ key: "other" }]);
  });

  it("puts items the patch names first when they are new, then live-only items in live order", () => {
    const out = patchPod({ spec: { containers: [{ name: "new", image: "x" }] } });
    expect(names(out.spec.containers)).toEqual(["new", "app", "sidecar"]);
  });

  it("$patch: delete removes an item; $patch: replace replaces the list", () => {
    expect(
      names(patchPod({ spec: { containers: [{ name: "sidecar", $patch: "delete" }] } }).spec.containers),
    ).toEqual(["app"]);
    const replaced = patchPod({
      spec: { containers: [{ name: "only", image: "x" }, { $patch: "replace" }] },
    });
    expect(replaced.spec.containers).toEqual([{ name: "only", image: "x" }]);
  });

  it("merged scalar lists are unions; $deleteFromPrimitiveList removes values", () => {
    expect(patchPod({ metadata: { finalizers: ["c", "a"] } }).metadata.finalizers).toEqual(["c", "a", "b"]);
    expect(
      patchPod({ metadata: { "$deleteFromPrimitiveList/finalizers": ["a"] } }).metadata.finalizers,
    ).toEqual(["b"]);
  });

  it("$setElementOrder sets the final order of a merged list", () => {
    const out = patchPod({
      spec: {
        "$setElementOrder/containers": [{ name: "sidecar" }, { name: "app" }],
        containers: [{ name: "app", image: "nginx:3" }],
      },
    });
    expect(names(out.spec.containers)).toEqual(["sidecar", "app"]);
    expect(out.spec.containers[1]!.image).toBe("nginx:3");
  });

  it("$retainKeys switches a volume's source without leaving the old one", () => {
    const out = patchPod({
      spec: { volumes: [{ name: "cfg", secret: { secretName: "s" }, $retainKeys: ["name", "secret"] }] },
    });
    expect(out.spec.volumes).toEqual([{ name: "cfg", secret: { secretName: "s" } }]);
  });

  it("$retainKeys on a Deployment strategy clears rollingUpdate", () => {
    const d = {
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: { name: "d" },
      spec: { strategy: { type: "RollingUpdate", rollingUpdate: { maxSurge: 1 } } },
    };
    const out = applyStrategicMergePatch(
      d,
      { spec: { strategy: { $retainKeys: ["type"], type: "Recreate" } } },
      "apps/v1",
      "Deployment",
    );
    expect(out).toMatchObject({ spec: { strategy: { type: "Recreate" } } });
    expect((out as typeof d).spec.strategy).not.toHaveProperty("rollingUpdate");
  });

  it("Service ports merge by port", () => {
    const svc = {
      apiVersion: "v1",
      kind: "Service",
      metadata: { name: "s" },
      spec: { ports: [{ port: 80 }, { port: 443 }] },
    };
    const out = applyStrategicMergePatch(
      svc,
      { spec: { ports: [{ port: 80, targetPort: 8080 }] } },
      "v1",
      "Service",
    );
    expect((out as typeof svc).spec.ports).toEqual([{ port: 80, targetPort: 8080 }, { port: 443 }]);
  });
});

describe("applyStrategicMergePatch: maps and nulls", () => {
  it("null deletes; a null for an absent key is dropped; $patch on maps", () => {
    const out = patchPod({ metadata: { labels: { app: null, x: "1" }, annotations: { gone: null } } });
    expect(out.metadata.labels).toEqual({ x: "1" });
    expect(out.metadata).toEqual({
      name: "web",
      finalizers: ["a", "b"],
      labels: { x: "1" },
      annotations: {},
    });
    expect(patchPod({ metadata: { labels: { $patch: "replace", only: "1" } } }).metadata.labels).toEqual({
      only: "1",
    });
    expect(patchPod({ metadata: { labels: { $patch: "delete" } } }).metadata.labels).toEqual({});
  });

  it("a __proto__ key is data, for new and for merged maps", () => {
    const patch = JSON.parse(
      '{"metadata":{"__proto__":{"polluted":1},"labels":{"__proto__":{"polluted":2}}}}',
    );
    const out = applyStrategicMergePatch(pod(), patch, "v1", "Pod") as { metadata: Record<string, unknown> };
    expect(Object.hasOwn(out.metadata, "__proto__")).toBe(true);
    expect(Object.hasOwn(out.metadata.labels as object, "__proto__")).toBe(true);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it("a null body is an empty patch", () => {
    expect(applyStrategicMergePatch(pod(), null, "v1", "Pod")).toEqual(pod());
  });
});

describe("applyStrategicMergePatch: errors as the PATCH handler answers them", () => {
  it("an unknown kind: 400 strategic merge patch format is not supported (no merge patch fallback)", () => {
    expect(supportsStrategicMergePatch("example.com/v1", "Widget")).toBe(false);
    const e = statusOf(() => applyStrategicMergePatch({}, { a: 1 }, "example.com/v1", "Widget"));
    expect([e.code, e.reason, e.message]).toEqual([
      400,
      "BadRequest",
      "strategic merge patch format is not supported",
    ]);
  });

  it("a body that is not an object: 400 with Go's decoding message", () => {
    const e = statusOf(() => applyStrategicMergePatch(pod(), [1], "v1", "Pod"));
    expect([e.code, e.message]).toEqual([
      400,
      "json: cannot unmarshal array into Go value of type map[string]interface {}",
    ]);
  });

  it.each([
    [{ spec: { strategy: { $retainKeys: "type" } } }, "invalid patch format of retainKeys"],
    [
      { spec: { strategy: { $retainKeys: ["type"], rollingUpdate: {} } } },
      "invalid patch format of retainKeys",
    ],
    [{ spec: { $setElementOrder: [] } }, "invalid patch format of setElementOrder list"],
    [
      { spec: { template: { metadata: { $deleteFromPrimitiveList: ["a"] } } } },
      "invalid patch format of primitive list",
    ],
  ])("400 BadRequest for a malformed directive %j", (patch, message) => {
    const d = {
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: { name: "d" },
      spec: { strategy: {}, template: { metadata: { labels: {} } } },
    };
    const e = statusOf(() => applyStrategicMergePatch(d, patch, "apps/v1", "Deployment"));
    expect([e.code, e.reason, e.message]).toEqual([400, "BadRequest", message]);
  });

  it("a list of lists is 422 with upstream's generic message", () => {
    const p = { ...pod(), metadata: { name: "web", finalizers: [] } };
    const e = statusOf(() => applyStrategicMergePatch(p, { metadata: { finalizers: [["x"]] } }, "v1", "Pod"));
    expect([e.code, e.reason, e.message]).toEqual([
      422,
      "Invalid",
      "the server rejected our request due to an error in our request",
    ]);
    expect((e.cause as Error).message).toBe("lists of lists are not supported");
  });

  it("other library errors are 400 with the library's words (upstream answers them 500, reason empty)", () => {
    const mixed = statusOf(() => patchPod({ metadata: { finalizers: [["x"]] } }));
    expect([mixed.code, mixed.message]).toEqual([400, "list element types are not identical: [[a b] [[x]]]"]);
    const e = statusOf(() => patchPod({ spec: { containers: [{ image: "x" }] } }));
    expect([e.code, e.reason, e.message]).toEqual([
      400,
      "BadRequest",
      "map: map[image:x] does not contain declared merge key: name",
    ]);
    const bad = statusOf(() => patchPod({ spec: { containers: [{ name: "app", $patch: "explode" }] } }));
    expect(bad.message).toBe("unknown patch type: explode in map: map[$patch:explode name:app]");
  });
});

describe("pruneAsDecoded", () => {
  it("drops leftover directive keys and null fields, keeps list items", () => {
    const out = patchPod({
      spec: {
        containers: [
          {
            name: "z",
            env: [
              { name: "q", value: null },
              { name: "r", $patch: "delete" },
            ],
          },
        ],
      },
    });
    expect(out.spec.containers[0]).toEqual({ name: "z", env: [{ name: "q" }, { name: "r" }] });
    expect(pruneAsDecoded({ a: [null, { $x: 1, b: null }] })).toEqual({ a: [null, {}] });
  });
});
