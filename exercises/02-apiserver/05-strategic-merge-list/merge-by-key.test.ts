import { describe, expect, it } from "vitest";
import { lookupField, podSpec, type StructMeta } from "../../../code/apiserver/patch/patch-meta.ts";
import {
  applyStrategicMergePatch,
  strategicMergeMapPatch,
} from "../../../code/apiserver/patch/strategic-merge-patch.ts";
import { type JSONMap, mergeListByKey } from "./merge-by-key.ts";

/** The schema of a Container, from the course's patch metadata (`containers` merge by `name`). */
const containerMeta = lookupField(podSpec, "containers").type as StructMeta;
/** The real strategic merge of one container's fields — its env, ports, mounts merge by key too. */
const mergeContainer = (live: JSONMap, p: JSONMap) => strategicMergeMapPatch(live, p, containerMeta);

function liveContainers(): JSONMap[] {
  return [
    {
      name: "app",
      image: "nginx:1.25",
      ports: [{ containerPort: 80, protocol: "TCP" }],
      env: [{ name: "MODE", value: "prod" }],
    },
    { name: "sidecar", image: "envoy:1.30", args: ["--log-level", "info"] },
  ];
}

const summary = (list: JSONMap[]) => list.map((c) => `${c.name}=${c.image}`);

describe("mergeListByKey on a pod's containers (merge key: name)", () => {
  it("a patch item with a live item's name is merged into it, in place; the other items stay", () => {
    const out = mergeListByKey(
      liveContainers(),
      [{ name: "app", image: "nginx:1.27" }],
      "name",
      mergeContainer,
    );
    expect(summary(out)).toEqual(["app=nginx:1.27", "sidecar=envoy:1.30"]);
    // Merged, not replaced: the fields the patch did not mention are still there.
    expect(out[0]).toEqual({ ...liveContainers()[0], image: "nginx:1.27" });
    expect(out[1]).toEqual(liveContainers()[1]);
  });

  it("a patch item with a new name is appended, after the live items", () => {
    const out = mergeListByKey(
      liveContainers(),
      [{ name: "log", image: "busybox:1.36", command: ["tail", "-F", "/var/log/app.log"] }],
      "name",
      mergeContainer,
    );
    expect(summary(out)).toEqual(["app=nginx:1.25", "sidecar=envoy:1.30", "log=busybox:1.36"]);
    expect(out[2]).toEqual({
      name: "log",
      image: "busybox:1.36",
      command: ["tail", "-F", "/var/log/app.log"],
    });
  });

  it("merging a matched item is mergeItem's job: the container's env merges by name in turn", () => {
    const out = mergeListByKey(
      liveContainers(),
      [{ name: "app", env: [{ name: "DEBUG", value: "1" }] }],
      "name",
      mergeContainer,
    );
    expect(out[0]).toEqual(
      mergeContainer(liveContainers()[0], { name: "app", env: [{ name: "DEBUG", value: "1" }] }),
    );
    expect((out[0].env as JSONMap[]).map((e) => e.name).sort()).toEqual(["DEBUG", "MODE"]);
    expect(out[1]).toEqual(liveContainers()[1]);
  });

  it("`$patch: delete` removes the live item with that name, and is not itself an item", () => {
    const out = mergeListByKey(
      liveContainers(),
      [{ name: "sidecar", $patch: "delete" }],
      "name",
      mergeContainer,
    );
    expect(out).toEqual([liveContainers()[0]]);
    // Deleting a name that is not there changes nothing.
    expect(
      mergeListByKey(liveContainers(), [{ name: "ghost", $patch: "delete" }], "name", mergeContainer),
    ).toEqual(liveContainers());
  });

  it("`$patch: replace` drops the live list: the result is the patch's other items", () => {
    const out = mergeListByKey(
      liveContainers(),
      [{ name: "only", image: "alpine:3.20" }, { $patch: "replace" }],
      "name",
      mergeContainer,
    );
    expect(out).toEqual([{ name: "only", image: "alpine:3.20" }]);
    // Wherever it stands in the patch.
    const first = mergeListByKey(
      liveContainers(),
      [{ $patch: "replace" }, { name: "app", image: "nginx:1.27" }],
      "name",
      mergeContainer,
    );
    expect(first).toEqual([{ name: "app", image: "nginx:1.27" }]);
  });

  it("a delete, a change and an addition in one patch", () => {
    const out = mergeListByKey(
      liveContainers(),
      [
        { name: "sidecar", $patch: "delete" },
        { name: "app", image: "nginx:1.27" },
        { name: "log", image: "busybox:1.36" },
      ],
      "name",
      mergeContainer,
    );
    expect(summary(out)).toEqual(["app=nginx:1.27", "log=busybox:1.36"]);
    expect(out.some((c) => "$patch" in c)).toBe(false);
  });

  it("an item without the merge key is an error, in upstream's words — not a nameless container appended", () => {
    expect(() => mergeListByKey(liveContainers(), [{ image: "nginx:1.27" }], "name", mergeContainer)).toThrow(
      "map: map[image:nginx:1.27] does not contain declared merge key: name",
    );
  });

  it("changes neither the live list nor the patch", () => {
    const live = liveContainers();
    const patch: JSONMap[] = [
      { name: "sidecar", $patch: "delete" },
      { name: "app", image: "nginx:1.27" },
      { name: "log", image: "busybox:1.36" },
    ];
    const patchBefore = structuredClone(patch);
    const out = mergeListByKey(live, patch, "name", mergeContainer);
    expect(live).toEqual(liveContainers());
    expect(patch).toEqual(patchBefore);
    (out[out.length - 1] as JSONMap).image = "changed later";
    expect(patch).toEqual(patchBefore);
  });

  it("changes neither list when the patch only adds and changes (no delete to copy the list first)", () => {
    const live = liveContainers();
    const out = mergeListByKey(
      live,
      [{ name: "app", image: "nginx:1.27" }, { name: "log" }],
      "name",
      mergeContainer,
    );
    expect(live).toEqual(liveContainers());
    expect(out).not.toBe(live);
    expect(out).toHaveLength(3);
  });
});

describe("mergeListByKey with other merge keys", () => {
  const mergeShallow = (l: JSONMap, p: JSONMap) => ({ ...l, ...p });

  it("a pod's conditions merge by type", () => {
    const live: JSONMap[] = [
      { type: "PodScheduled", status: "True" },
      { type: "Ready", status: "False", reason: "ContainersNotReady" },
    ];
    const out = mergeListByKey(
      live,
      [
        { type: "Ready", status: "True", reason: "" },
        { type: "Initialized", status: "True" },
      ],
      "type",
      mergeShallow,
    );
    expect(out).toEqual([
      { type: "PodScheduled", status: "True" },
      { type: "Ready", status: "True", reason: "" },
      { type: "Initialized", status: "True" },
    ]);
  });

  it("ports merge by containerPort — a number", () => {
    const live: JSONMap[] = [
      { containerPort: 80, name: "http" },
      { containerPort: 443, name: "https" },
    ];
    const out = mergeListByKey(
      live,
      [
        { containerPort: 443, protocol: "TCP" },
        { containerPort: 8080, $patch: "delete" },
        { containerPort: 80, $patch: "delete" },
      ],
      "containerPort",
      mergeShallow,
    );
    expect(out).toEqual([{ containerPort: 443, name: "https", protocol: "TCP" }]);
  });

  it("`$patch: delete` removes every live item with that key, not only the first (a DNS port on TCP and UDP)", () => {
    const live: JSONMap[] = [
      { containerPort: 53, protocol: "UDP", name: "dns" },
      { containerPort: 9153, protocol: "TCP", name: "metrics" },
      { containerPort: 53, protocol: "TCP", name: "dns-tcp" },
    ];
    const out = mergeListByKey(
      live,
      [{ containerPort: 53, $patch: "delete" }],
      "containerPort",
      mergeShallow,
    );
    expect(out).toEqual([{ containerPort: 9153, protocol: "TCP", name: "metrics" }]);
  });
});

describe("mergeListByKey agrees with the real PATCH handler's strategic merge (up to the order)", () => {
  /** The handler then reorders the list (normalizeElementOrder): compare item by item, by name. */
  const byName = (list: JSONMap[]) => [...list].sort((a, b) => String(a.name).localeCompare(String(b.name)));

  const pod = () => ({
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name: "web", namespace: "default" },
    spec: { containers: liveContainers(), restartPolicy: "Always" },
  });

  const cases: [string, JSONMap[]][] = [
    ["kubectl set image", [{ name: "app", image: "nginx:1.27" }]],
    ["add a sidecar", [{ name: "log", image: "busybox:1.36" }]],
    [
      "change both, add one",
      [
        { name: "app", image: "nginx:1.27" },
        { name: "sidecar", image: "envoy:1.31" },
        { name: "log", image: "busybox:1.36" },
      ],
    ],
    ["delete one", [{ name: "sidecar", $patch: "delete" }]],
    [
      "delete and change",
      [
        { name: "sidecar", $patch: "delete" },
        { name: "app", image: "nginx:1.27" },
      ],
    ],
    ["replace the list", [{ name: "only", image: "alpine:3.20" }, { $patch: "replace" }]],
    [
      "merge env and ports",
      [{ name: "app", env: [{ name: "DEBUG", value: "1" }], ports: [{ containerPort: 8080 }] }],
    ],
  ];

  it.each(cases)("%s", (_title, containers) => {
    const patched = applyStrategicMergePatch(pod(), { spec: { containers } }, "v1", "Pod") as {
      spec: { containers: JSONMap[] };
    };
    const yours = mergeListByKey(liveContainers(), structuredClone(containers), "name", mergeContainer);
    expect(byName(yours)).toEqual(byName(patched.spec.containers));
  });
});
