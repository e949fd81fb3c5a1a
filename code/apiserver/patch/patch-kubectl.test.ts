// Differential test: the same object and patch through our libraries and through the real kubectl
// (`kubectl patch --local`, which runs upstream's jsonpatch, MergePatch and StrategicMergePatch on
// the file without a server). Results must be the same JSON; failures the same library message.
import { createHash } from "node:crypto";
import {
  existsSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { describeWithTools } from "../../../scripts/external-tools.ts";
import { runKubectl } from "../testing/kubectl-env.ts";
import { applyOperations, decodePatch, JSONPatchError } from "./json-patch.ts";
import { applyMergePatch } from "./merge-patch.ts";
import { lookupKind } from "./patch-meta.ts";
import { strategicMergeMapPatch } from "./strategic-merge-patch.ts";

type PatchType = "strategic" | "merge" | "json";
interface Case {
  name: string;
  type: PatchType;
  obj: Record<string, unknown>;
  patch: unknown;
}

const pod = {
  apiVersion: "v1",
  kind: "Pod",
  metadata: {
    name: "web",
    labels: { app: "web", tier: "front" },
    finalizers: ["a.example.com/x", "b.example.com/y"],
    ownerReferences: [{ apiVersion: "apps/v1", kind: "ReplicaSet", name: "rs", uid: "u1" }],
  },
  spec: {
    containers: [
      {
        name: "app",
        image: "nginx:1",
        args: ["--a", "--b"],
        env: [
          { name: "A", value: "1" },
          { name: "B", value: "2" },
        ],
        ports: [
          { containerPort: 80, name: "http" },
          { containerPort: 443, name: "https" },
        ],
        volumeMounts: [{ name: "data", mountPath: "/data" }],
      },
      { name: "sidecar", image: "busybox", command: ["sleep", "1d"] },
    ],
    volumes: [
      { name: "data", emptyDir: {} },
      { name: "cfg", configMap: { name: "cfg" } },
    ],
    tolerations: [{ key: "k", operator: "Exists" }],
    imagePullSecrets: [{ name: "reg" }],
  },
};

const deployment = {
  apiVersion: "apps/v1",
  kind: "Deployment",
  metadata: { name: "d" },
  spec: {
    replicas: 2,
    strategy: { type: "RollingUpdate", rollingUpdate: { maxSurge: 1, maxUnavailable: 0 } },
    template: {
      metadata: { labels: { app: "d" } },
      spec: { containers: [{ name: "c", image: "v1", env: [{ name: "X", value: "x" }] }] },
    },
  },
};

const service = {
  apiVersion: "v1",
  kind: "Service",
  metadata: { name: "s" },
  spec: {
    selector: { app: "web" },
    ports: [
      { name: "http", port: 80 },
      { name: "https", port: 443 },
    ],
  },
};

const node = {
  apiVersion: "v1",
  kind: "Node",
  metadata: { name: "n1" },
  spec: { podCIDRs: ["10.0.0.0/24"], taints: [{ key: "a", effect: "NoSchedule" }] },
  status: {
    addresses: [
      { type: "InternalIP", address: "10.1.1.1" },
      { type: "Hostname", address: "n1" },
    ],
    conditions: [{ type: "Ready", status: "False" }],
  },
};

const smp = (name: string, obj: Record<string, unknown>, patch: unknown): Case => ({
  name,
  type: "strategic",
  obj,
  patch,
});
const merge = (name: string, obj: Record<string, unknown>, patch: unknown): Case => ({
  name,
  type: "merge",
  obj,
  patch,
});
const json = (name: string, obj: Record<string, unknown>, patch: unknown): Case => ({
  name,
  type: "json",
  obj,
  patch,
});

const cases: Case[] = [
  // strategic merge patch: lists merged by key
  smp("container image by name", pod, { spec: { containers: [{ name: "sidecar", image: "alpine" }] } }),
  smp("new container appended", pod, { spec: { containers: [{ name: "new", image: "x" }] } }),
  smp("new and existing containers", pod, {
    spec: {
      containers: [
        { name: "new", image: "x" },
        { name: "app", image: "nginx:2" },
      ],
    },
  }),
  smp("env merged by name", pod, {
    spec: {
      containers: [
        {
          name: "app",
          env: [
            { name: "B", value: "20" },
            { name: "C", value: "3" },
          ],
        },
      ],
    },
  }),
  smp("ports merged by containerPort", pod, {
    spec: { containers: [{ name: "app", ports: [{ containerPort: 443, protocol: "TCP" }] }] },
  }),
  smp("atomic list replaced (args)", pod, { spec: { containers: [{ name: "app", args: ["--c"] }] } }),
  smp("atomic list replaced (tolerations)", pod, {
    spec: { tolerations: [{ key: "z", operator: "Exists" }] },
  }),
  smp("$patch delete container", pod, { spec: { containers: [{ name: "sidecar", $patch: "delete" }] } }),
  smp("$patch delete env item", pod, {
    spec: { containers: [{ name: "app", env: [{ name: "A", $patch: "delete" }] }] },
  }),
  smp("$patch replace list", pod, {
    spec: { containers: [{ name: "only", image: "x" }, { $patch: "replace" }] },
  }),
  smp("$patch replace map", pod, { metadata: { labels: { $patch: "replace", only: "one" } } }),
  smp("$patch delete map", pod, { metadata: { labels: { $patch: "delete" } } }),
  smp("null deletes a key", pod, { metadata: { labels: { tier: null } }, spec: { tolerations: null } }),
  smp("null for an absent key is dropped", pod, { metadata: { annotations: { a: null, b: "x" } } }),
  smp("finalizers unioned", pod, { metadata: { finalizers: ["c.example.com/z", "a.example.com/x"] } }),
  smp("$deleteFromPrimitiveList", pod, {
    metadata: { "$deleteFromPrimitiveList/finalizers": ["a.example.com/x"] },
  }),
  smp("ownerReferences by uid", pod, {
    metadata: { ownerReferences: [{ apiVersion: "v1", kind: "X", name: "x", uid: "u2" }] },
  }),
  smp("$setElementOrder containers", pod, {
    spec: {
      "$setElementOrder/containers": [{ name: "sidecar" }, { name: "app" }],
      containers: [{ name: "app", image: "nginx:3" }],
    },
  }),
  smp("$setElementOrder with a new item", pod, {
    spec: {
      "$setElementOrder/containers": [{ name: "sidecar" }, { name: "new" }, { name: "app" }],
      containers: [{ name: "new", image: "n" }],
    },
  }),
  smp("$setElementOrder finalizers", pod, {
    metadata: {
      "$setElementOrder/finalizers": ["b.example.com/y", "c.example.com/z", "a.example.com/x"],
      finalizers: ["c.example.com/z"],
    },
  }),
  smp("volumes $retainKeys switch source", pod, {
    spec: { volumes: [{ name: "cfg", secret: { secretName: "s" }, $retainKeys: ["name", "secret"] }] },
  }),
  smp("deployment strategy $retainKeys", deployment, {
    spec: { strategy: { $retainKeys: ["type"], type: "Recreate" } },
  }),
  smp("deployment template container env", deployment, {
    spec: { template: { spec: { containers: [{ name: "c", env: [{ name: "Y", value: "y" }] }] } } },
  }),
  smp("service ports by port", service, { spec: { ports: [{ port: 80, targetPort: 8080 }] } }),
  smp("service new port", service, { spec: { ports: [{ port: 8443, name: "alt" }] } }),
  smp("node addresses by type", node, { status: { addresses: [{ type: "Hostname", address: "n1.local" }] } }),
  smp("node taints atomic", node, { spec: { taints: [{ key: "b", effect: "NoExecute" }] } }),
  smp("node podCIDRs unioned", node, { spec: { podCIDRs: ["10.0.1.0/24"] } }),
  smp("node condition by type", node, { status: { conditions: [{ type: "Ready", status: "True" }] } }),
  smp("type change replaces", pod, { metadata: { labels: "oops" } }),
  smp("directive maps where nothing was are dropped", pod, {
    metadata: { annotations: { $patch: "replace", a: "b" } },
    spec: {
      affinity: { $patch: "delete" },
      securityContext: { runAsUser: 1, seLinuxOptions: { $patch: "delete" } },
    },
  }),
  smp("directive map replacing a scalar deletes it", pod, {
    spec: { containers: [{ name: "app", image: { $patch: "delete" } }] },
  }),
  smp("appended item keeps its directives and nulls", pod, {
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
  }),
  smp("new atomic list loses $patch items and nulls", pod, {
    spec: {
      hostAliases: [{ ip: "1.2.3.4", hostnames: null }],
      readinessGates: [{ conditionType: "a", $patch: "delete" }],
    },
  }),
  smp("$setElementOrder for an absent list", pod, {
    spec: {
      "$setElementOrder/hostAliases": [{ ip: "1" }, { ip: "2" }],
      hostAliases: [{ ip: "1" }, { ip: "2", $patch: "delete" }],
    },
  }),
  smp("$deleteFromPrimitiveList for an absent list", node, {
    metadata: { "$deleteFromPrimitiveList/finalizers": ["x"] },
  }),
  smp("error: missing merge key", pod, { spec: { containers: [{ image: "x" }] } }),
  smp("error: bad $patch value", pod, { spec: { containers: [{ name: "app", $patch: "explode" }] } }),
  smp("error: $patch merge in list", pod, { spec: { containers: [{ name: "app", $patch: "merge" }] } }),
  smp("error: $retainKeys not a list", deployment, { spec: { strategy: { $retainKeys: "type" } } }),
  smp("error: key outside $retainKeys", deployment, {
    spec: { strategy: { $retainKeys: ["type"], rollingUpdate: { maxSurge: 2 } } },
  }),
  smp("error: mixed element types", pod, { metadata: { finalizers: [1] } }),
  smp(
    "error: list of lists",
    { ...node, metadata: { name: "n1", finalizers: [] } },
    { metadata: { finalizers: [["x"]] } },
  ),
  smp("error: order does not match $setElementOrder", pod, {
    spec: {
      "$setElementOrder/containers": [{ name: "app" }],
      containers: [{ name: "sidecar", image: "x" }],
    },
  }),
  // JSON merge patch
  merge("labels merged, null deletes", pod, { metadata: { labels: { tier: null, new: "1" } } }),
  merge("list replaced whole", pod, { spec: { containers: [{ name: "only", image: "x" }] } }),
  merge("nulls pruned in new subtree", pod, { spec: { securityContext: { runAsUser: 1, fsGroup: null } } }),
  merge("nulls pruned in objects inside a new list", pod, { spec: { newList: [{ a: null, b: 1 }, null] } }),
  merge("object replaced by list keeps nulls", pod, { metadata: { labels: [{ a: null }] } }),
  merge("scalar replaced by object, pruned", pod, { spec: { tolerations: { x: null, y: 1 } } }),
  // JSON patch
  json("replace nested", pod, [{ op: "replace", path: "/spec/containers/0/image", value: "nginx:9" }]),
  json("add to list end with -", pod, [{ op: "add", path: "/spec/containers/0/args/-", value: "--z" }]),
  json("add at index", pod, [{ op: "add", path: "/spec/containers/0/args/0", value: "--first" }]),
  json("negative index", pod, [{ op: "remove", path: "/spec/containers/0/args/-1" }]),
  json("escaped pointer ~1 ~0", pod, [
    { op: "add", path: "/metadata/annotations", value: {} },
    { op: "add", path: "/metadata/annotations/example.com~1a~0b", value: "v" },
  ]),
  json("move and copy", pod, [
    { op: "copy", from: "/metadata/labels/app", path: "/metadata/labels/copied" },
    { op: "move", from: "/metadata/labels/tier", path: "/metadata/labels/moved" },
  ]),
  json("test passes then remove", pod, [
    { op: "test", path: "/metadata/name", value: "web" },
    { op: "remove", path: "/spec/tolerations" },
  ]),
  json("replace of a missing key adds it", pod, [{ op: "replace", path: "/spec/hostname", value: "h" }]),
  json("add without value stores null", pod, [{ op: "add", path: "/spec/nodeName" }]),
  json("replace root with scalar is a no-op", pod, [{ op: "replace", path: "", value: 3 }]),
  json("error: test fails", pod, [{ op: "test", path: "/metadata/name", value: "other" }]),
  json("error: remove missing key", pod, [{ op: "remove", path: "/spec/nope" }]),
  json("error: missing path", pod, [{ op: "add", path: "/spec/a/b", value: 1 }]),
  json("error: index out of range", pod, [{ op: "add", path: "/spec/containers/0/args/9", value: "x" }]),
  json("error: bad index", pod, [{ op: "add", path: "/spec/containers/0/args/x", value: "x" }]),
  json("error: unknown op", pod, [{ op: "frob", path: "/a" }]),
  json("error: no path", pod, [{ op: "replace", value: 1 }]),
  json("error: move from missing", pod, [{ op: "move", from: "/spec/zzz", path: "/spec/yyy" }]),
];

/** Our result for a case: the patched object, or the library's error message. */
function ours(c: Case): { ok: unknown } | { err: string } {
  try {
    if (c.type === "json") return { ok: applyOperations(c.obj, decodePatch(c.patch)) };
    if (c.type === "merge") return { ok: applyMergePatch(c.obj, c.patch) };
    const schema = lookupKind(c.obj.apiVersion as string, c.obj.kind as string);
    return { ok: strategicMergeMapPatch(c.obj, c.patch as Record<string, unknown>, schema!) };
  } catch (e) {
    if (e instanceof JSONPatchError || (e as Error).name === "MergePatchError")
      return { err: (e as Error).message };
    throw e;
  }
}

/** JSON with object keys sorted, so key order (Go sorts, we keep insertion order) does not count. */
function canonical(v: unknown): string {
  const sort = (x: unknown): unknown => {
    if (Array.isArray(x)) return x.map(sort);
    if (x && typeof x === "object") {
      return Object.fromEntries(
        Object.keys(x)
          .sort()
          .map((k) => [k, sort((x as Record<string, unknown>)[k])]),
      );
    }
    return x;
  };
  return JSON.stringify(sort(v));
}

/** kubectl patch --local prints "error: <message>"; it rewrites the "missing key" error itself. */
function kubectlMessage(stderr: string): string {
  return stderr.replace(/^error: /, "").trim();
}

describeWithTools("patch libraries match kubectl patch --local", ["kubectl"], (tools) => {
  // Prefer the pinned v1.32 binary the dispatcher keeps beside itself: --local needs no server.
  const real = realpathSync(tools.kubectl!.path!);
  const pinned = join(dirname(real), "kubectl.1.32");
  const kubectl = existsSync(pinned) ? pinned : real;
  const results = new Map<string, { stdout: string; stderr: string; code: number }>();
  let dir = "";

  // kubectl's answers are memoized in the OS temp dir, keyed by the binary (path, size, mtime) and
  // the exact case: a rerun on the same machine skips ~60 process starts; a new or edited case, or
  // another kubectl, runs kubectl again. Our side is always recomputed.
  const stat = statSync(kubectl);
  const cacheFile = join(
    tmpdir(),
    `patch-kubectl-oracle-${createHash("sha256").update(`${kubectl}:${stat.size}:${stat.mtimeMs}`).digest("hex").slice(0, 16)}.json`,
  );
  const caseKey = (c: Case) => JSON.stringify([c.type, c.obj, c.patch]);

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "patch-oracle-"));
    let cache: Record<string, { stdout: string; stderr: string; code: number }> = {};
    try {
      cache = JSON.parse(readFileSync(cacheFile, "utf8"));
    } catch {
      cache = {};
    }
    const run = async (c: Case, i: number) => {
      const hit = cache[caseKey(c)];
      if (hit) {
        results.set(c.name, hit);
        return;
      }
      const file = join(dir, `${i}.json`);
      writeFileSync(file, JSON.stringify(c.obj));
      const { out, err, code } = await runKubectl(
        { ...process.env, KUBECONFIG: join(dir, "none") },
        ["patch", "--local", "-f", file, `--type=${c.type}`, "-p", JSON.stringify(c.patch), "-o", "json"],
        // No time limit: a run killed on a loaded machine would be memoized as kubectl's answer.
        { kubectl, timeoutMs: 0 },
      );
      const r = { stdout: out, stderr: err, code };
      results.set(c.name, r);
      cache[caseKey(c)] = r;
    };
    // Two at a time: the machine has two cores.
    let next = 0;
    const worker = async () => {
      while (next < cases.length) {
        const i = next++;
        await run(cases[i]!, i);
      }
    };
    await Promise.all([worker(), worker()]);
    writeFileSync(cacheFile, JSON.stringify(cache));
  }, 90_000);

  afterAll(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it.each(cases.map((c) => [c.type, c.name, c] as const))("%s: %s", (_t, _n, c) => {
    const k = results.get(c.name)!;
    const got = ours(c);
    if (k.code !== 0) {
      expect(got, `kubectl failed: ${k.stderr}`).toHaveProperty("err");
      const want = kubectlMessage(k.stderr);
      const mine = (got as { err: string }).err.trim();
      // kubectl turns "doc is missing key: /x" into "Object to be patched is missing field (/x)".
      expect(want.startsWith("Object to be patched") ? want : mine).toBe(want);
      return;
    }
    expect(got, `kubectl succeeded: ${k.stdout}`).toHaveProperty("ok");
    expect(canonical((got as { ok: unknown }).ok)).toBe(canonical(JSON.parse(k.stdout)));
  });
});
