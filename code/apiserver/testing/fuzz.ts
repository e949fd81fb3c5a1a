/**
 * The bad-input fuzz generator — seeded, reproducible malformed requests for a running API
 * server: wrong types at any depth, deep and huge bodies, bad protobuf, bad patches, bad names
 * and selectors. Sending them and judging the answers is fuzz-run.ts; the secured server's
 * credentials (certificates, tokens, impersonation) are fuzz-secured.ts.
 * No upstream counterpart: test harness (upstream fuzzes its codecs with apimachinery's fuzzer).
 *
 * Solves:
 * - hand-written tests cover the mistakes someone thought of; a learner (or a broken client)
 *   sends the others: a wrong type three levels down, 20,000 nested brackets, invalid UTF-8, a
 *   strategic merge patch with a `$patch` directive in the wrong place, `?limit=-1`;
 * - a failure must be reproducible: every request comes from one seed, and the report names the
 *   seed and the request's index so `FUZZ_SEED=<seed>` replays it.
 *
 * Invariants:
 * - requests are a pure function of (seed, index); the generator holds no other randomness;
 * - no request opens a watch without `timeoutSeconds=1`, so the run ends.
 *
 * @upstream none — test harness (upstream fuzzes its codecs with go-fuzz: apimachinery's pkg/api/apitesting/fuzzer, and structured-merge-diff's fuzz tests)
 * @chapter 02-apiserver
 */
import { stringify as toYAML } from "yaml";
import { mulberry32 } from "../../testing/random.ts";
import { encodeProtobuf } from "./schema-values.ts";

// #region random
/** Draws from one seeded generator (code/testing/random.ts): ints, picks, coin flips. */
export class Random {
  constructor(readonly next: () => number) {}
  int(n: number): number {
    return Math.floor(this.next() * n);
  }
  pick<T>(xs: readonly T[]): T {
    return xs[this.int(xs.length)];
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
}
// #endregion random

export interface FuzzRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: Buffer;
  /** What the generator meant, for the report. */
  note: string;
}

// #region objects
const container = () => ({ name: "c", image: "nginx", ports: [{ containerPort: 80 }] });
const samples: { path: string; apiVersion: string; kind: string; object: () => Record<string, unknown> }[] = [
  {
    path: "/api/v1/namespaces/default/pods",
    apiVersion: "v1",
    kind: "Pod",
    object: () => ({
      metadata: { name: "p", labels: { app: "web" } },
      spec: {
        containers: [container()],
        terminationGracePeriodSeconds: 30,
        affinity: {
          nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [] } },
        },
      },
    }),
  },
  {
    path: "/api/v1/namespaces/default/configmaps",
    apiVersion: "v1",
    kind: "ConfigMap",
    object: () => ({ metadata: { name: "cm" }, data: { a: "b" }, binaryData: { c: "ZA==" } }),
  },
  {
    path: "/apis/apps/v1/namespaces/default/deployments",
    apiVersion: "apps/v1",
    kind: "Deployment",
    object: () => ({
      metadata: { name: "d" },
      spec: {
        replicas: 1,
        selector: { matchLabels: { app: "d" } },
        template: { metadata: { labels: { app: "d" } }, spec: { containers: [container()] } },
        strategy: { type: "RollingUpdate", rollingUpdate: { maxSurge: "25%", maxUnavailable: 1 } },
      },
    }),
  },
  {
    path: "/api/v1/namespaces/default/services",
    apiVersion: "v1",
    kind: "Service",
    object: () => ({
      metadata: { name: "s" },
      spec: { ports: [{ port: 80, targetPort: "http" }], selector: { a: "b" } },
    }),
  },
  {
    path: "/api/v1/nodes",
    apiVersion: "v1",
    kind: "Node",
    object: () => ({
      metadata: { name: "n" },
      spec: { taints: [{ key: "k", effect: "NoSchedule" }] },
      status: { capacity: { cpu: "2" } },
    }),
  },
  {
    path: "/api/v1/namespaces/default/events",
    apiVersion: "v1",
    kind: "Event",
    object: () => ({
      metadata: { name: "e" },
      involvedObject: { kind: "Pod", name: "p" },
      reason: "R",
      count: 1,
    }),
  },
  {
    path: "/apis/coordination.k8s.io/v1/namespaces/default/leases",
    apiVersion: "coordination.k8s.io/v1",
    kind: "Lease",
    object: () => ({
      metadata: { name: "l" },
      spec: { holderIdentity: "a", leaseDurationSeconds: 15, renewTime: "2024-01-01T00:00:00.000000Z" },
    }),
  },
  {
    path: "/api/v1/namespaces",
    apiVersion: "v1",
    kind: "Namespace",
    object: () => ({ metadata: { name: "ns" }, spec: { finalizers: ["kubernetes"] } }),
  },
];

/** Every value of an object, with a way to replace it (for "a wrong type at any depth"). */
function slots(root: unknown): { set: (v: unknown) => void; value: unknown }[] {
  const out: { set: (v: unknown) => void; value: unknown }[] = [];
  const walk = (v: unknown) => {
    if (Array.isArray(v)) {
      v.forEach((x, i) => {
        out.push({ value: x, set: (y) => (v[i] = y) });
        walk(x);
      });
    } else if (v && typeof v === "object") {
      const o = v as Record<string, unknown>;
      for (const k of Object.keys(o)) {
        out.push({ value: o[k], set: (y) => (o[k] = y) });
        walk(o[k]);
      }
    }
  };
  walk(root);
  return out;
}

const weird: unknown[] = [
  null,
  true,
  false,
  0,
  -1,
  1.5,
  2 ** 31,
  2 ** 63,
  -(2 ** 63),
  1e308,
  "",
  "x",
  "thirty",
  "100m",
  "-1",
  "2024-13-45T99:99:99Z",
  "\u0000",
  "\ud800",
  "💥",
  [],
  [null],
  [[]],
  {},
  { "": {} },
  { $patch: "delete" },
  { __proto__: { polluted: true } },
  "a".repeat(70000),
];

function deep(r: Random, depth: number): string {
  const open = r.pick(["[", '{"a":']);
  const close = open === "[" ? "]" : "}";
  return open.repeat(depth) + (r.chance(0.5) ? "1" : "") + close.repeat(r.chance(0.8) ? depth : depth - 1);
}
// #endregion objects

// #region bodies
/** A body for `sample`'s kind: valid, mutated, or not JSON at all. */
function body(r: Random, sample: (typeof samples)[number]): { bytes: Buffer; type: string; note: string } {
  const base = { apiVersion: sample.apiVersion, kind: sample.kind, ...sample.object() };
  const json = (v: unknown, note: string) => ({
    bytes: Buffer.from(JSON.stringify(v) ?? "null"),
    type: "application/json",
    note,
  });
  switch (r.int(12)) {
    case 0:
    case 1:
    case 2: {
      // A wrong value at a random place, maybe more than one.
      const n = 1 + r.int(3);
      for (let i = 0; i < n; i++) {
        const all = slots(base);
        const slot = r.pick(all);
        slot.set(structuredClone(r.pick(weird)));
      }
      return r.chance(0.2)
        ? { bytes: Buffer.from(toYAML(base)), type: "application/yaml", note: `yaml, ${n} wrong values` }
        : json(base, `${n} wrong values`);
    }
    case 3:
      return {
        bytes: Buffer.from(deep(r, r.pick([100, 9999, 10001, 50000, 200000]))),
        type: "application/json",
        note: "deep nesting",
      };
    case 4: {
      // Bytes that are not valid UTF-8, inside strings and keys.
      const text = JSON.stringify(base);
      const at = r.int(text.length);
      const bad = Buffer.from(
        r.pick([[0xff], [0xc3], [0xed, 0xa0, 0x80], [0xf8, 0x88, 0x80, 0x80, 0x80], [0x00]]),
      );
      return {
        bytes: Buffer.concat([Buffer.from(text.slice(0, at)), bad, Buffer.from(text.slice(at))]),
        type: "application/json",
        note: "invalid UTF-8",
      };
    }
    case 5: {
      const text = JSON.stringify(base);
      return {
        bytes: Buffer.from(text.slice(0, r.int(text.length))),
        type: "application/json",
        note: "truncated JSON",
      };
    }
    case 6: {
      const size = r.pick([1, 1000, 1_000_000, 3 * 1024 * 1024 - 200, 3 * 1024 * 1024 + 10]);
      const where = r.int(3);
      if (where === 0)
        (base as Record<string, unknown>).metadata = { name: "big", annotations: { a: "x".repeat(size) } };
      if (where === 1) (base as Record<string, unknown>).metadata = { name: "x".repeat(size) };
      if (where === 2)
        (base as Record<string, unknown>).metadata = {
          name: "many",
          labels: Object.fromEntries(Array.from({ length: Math.min(size, 50000) }, (_, i) => [`k${i}`, "v"])),
        };
      return json(base, `huge (${size})`);
    }
    case 7: {
      const yaml = r.pick([
        "a: [",
        "\t- x",
        "a: &a [*a]",
        "x: &x [1]\ny: &y [*x,*x,*x,*x,*x,*x,*x,*x,*x]\nz: &z [*y,*y,*y,*y,*y,*y,*y,*y,*y]\nw: [*z,*z,*z,*z,*z,*z,*z,*z,*z]",
        "- 1\n- 2",
        "!!binary aGVsbG8=",
        "apiVersion: v1\nkind: Pod\nmetadata: {name: y}\n---\nkind: Pod",
        "? [a]\n: b",
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  name: q\nspec: .inf",
        "[".repeat(5000),
        "apiVersion: v1\nkind: Pod\nmetadata:\n  creationTimestamp: 2024-01-01\n",
      ]);
      return { bytes: Buffer.from(yaml), type: "application/yaml", note: "bad YAML" };
    }
    case 8: {
      // Protobuf: random bytes, the prefix alone, or a valid encoding with bytes flipped or cut.
      let bytes: Buffer;
      try {
        bytes = encodeProtobuf(sample.apiVersion, sample.kind, base);
      } catch {
        bytes = Buffer.from([0x6b, 0x38, 0x73, 0x00, 0x0a, 0x05]);
      }
      const how = r.int(4);
      if (how === 0) bytes = Buffer.from(Array.from({ length: r.int(64) }, () => r.int(256)));
      else if (how === 1) bytes = Buffer.from([0x6b, 0x38, 0x73, 0x00]);
      else if (how === 2) bytes = bytes.subarray(0, r.int(bytes.length));
      else for (let i = 0; i < 3; i++) bytes[4 + r.int(Math.max(1, bytes.length - 4))] = r.int(256);
      return { bytes, type: "application/vnd.kubernetes.protobuf", note: `bad protobuf (${how})` };
    }
    case 9:
      return json(
        r.pick([
          [],
          "x",
          1,
          null,
          [base],
          { ...base, apiVersion: "v2" },
          { ...base, kind: "Widget" },
          { ...base, kind: 5 },
        ]),
        "not an object of the kind",
      );
    case 10: {
      // Keys given twice, at the top or inside.
      const text = JSON.stringify(base).replace(/\{"/, '{"metadata":{"name":"dup"},"');
      return { bytes: Buffer.from(text), type: "application/json", note: "duplicate keys" };
    }
    default:
      return {
        bytes: Buffer.from(Array.from({ length: r.int(200) }, () => r.int(256))),
        type: r.pick(["application/json", "text/plain", "", "application/json; charset=utf-16", "*/*"]),
        note: "random bytes",
      };
  }
}
// #endregion bodies

// #region patches
const patchOps = ["add", "remove", "replace", "move", "copy", "test", "bogus", 5];
const patchPaths = [
  "/",
  "",
  "/spec",
  "/spec/containers/0",
  "/spec/containers/-",
  "/spec/containers/99",
  "/metadata/labels/a~1b",
  "/metadata/~2",
  "/spec/containers/0/ports/0/containerPort",
  "/a/b/c",
  "spec",
  "/spec/replicas",
  "/metadata",
  "/status/conditions/0",
];

function patch(r: Random): { bytes: Buffer; type: string; note: string } {
  const kind = r.int(4);
  if (kind === 0) {
    const ops = Array.from({ length: 1 + r.int(3) }, () => {
      const op: Record<string, unknown> = { op: r.pick(patchOps), path: r.pick(patchPaths) };
      if (r.chance(0.7)) op.value = structuredClone(r.pick(weird));
      if (r.chance(0.3)) op.from = r.pick(patchPaths);
      return op;
    });
    const bytes = Buffer.from(JSON.stringify(r.chance(0.1) ? ops[0] : ops));
    return { bytes, type: "application/json-patch+json", note: "JSON patch" };
  }
  const directives: unknown[] = [
    { spec: { containers: [{ name: "c", $patch: "delete" }] } },
    { spec: { containers: [{ $patch: "delete" }] } },
    { spec: { containers: { $patch: "replace" } } },
    { spec: { $patch: "bogus" } },
    { $patch: "delete" },
    { spec: { $retainKeys: "x" } },
    { spec: { $retainKeys: ["a"], containers: [] } },
    { spec: { $setElementOrder: { containers: [{ name: "c" }] } } },
    { spec: { "$setElementOrder/containers": "x" } },
    { spec: { "$setElementOrder/containers": [{ name: "z" }, 5] } },
    { metadata: { "$deleteFromPrimitiveList/finalizers": "x" } },
    { metadata: { "$deleteFromPrimitiveList/finalizers": [{}] } },
    { spec: { containers: [[1]] } },
    { spec: { containers: [null, { name: null }] } },
    { spec: { volumes: [{ name: "v", $retainKeys: 5 }] } },
    { spec: { strategy: { $retainKeys: [null], type: "Recreate" } } },
    { metadata: { finalizers: [{ $patch: "merge" }] } },
    { spec: [1, 2] },
    [1],
    "x",
    null,
  ];
  let value: unknown = structuredClone(r.pick(directives));
  if (r.chance(0.3)) {
    const all = slots(value);
    if (all.length > 0) r.pick(all).set(structuredClone(r.pick(weird)));
  }
  if (kind === 3) {
    // Server-side apply: a configuration of the right kind, with something wrong in it.
    const sample = r.pick(samples);
    const config: Record<string, unknown> = {
      apiVersion: sample.apiVersion,
      kind: sample.kind,
      ...sample.object(),
    };
    const all = slots(config);
    r.pick(all).set(structuredClone(r.pick(weird)));
    value = r.chance(0.8) ? config : value;
    const text = r.chance(0.5) ? toYAML(value) : JSON.stringify(value);
    return {
      bytes: Buffer.from(text ?? "null"),
      type: "application/apply-patch+yaml",
      note: `apply ${sample.kind}`,
    };
  }
  const type = kind === 1 ? "application/merge-patch+json" : "application/strategic-merge-patch+json";
  return { bytes: Buffer.from(JSON.stringify(value) ?? "null"), type, note: type.split("/")[1] };
}
// #endregion patches

// #region requests
// Already as they appear in a URL: a client escapes what it sends (Node refuses a raw space).
const badNames = [
  "",
  "..",
  ".",
  "%zz",
  "%2F",
  "a%00b",
  "UPPER",
  "a".repeat(300),
  "%F0%9F%92%A5",
  "a%20b",
  "-a",
  "x%2e%2e",
  "%ff%fe",
];
const queries = [
  "labelSelector=a%20in%20(",
  "labelSelector=!!",
  "labelSelector=a=b=c",
  "labelSelector=a%20notin%20b",
  "fieldSelector=spec.nodeName==x==y",
  "fieldSelector=bogus=1",
  "fieldSelector=metadata.name%3Dx,=",
  "limit=-1",
  "limit=abc",
  "limit=99999999999999999999",
  "continue=not-a-token",
  "continue=eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6LTEsInN0YXJ0IjoiLyJ9",
  "resourceVersion=abc",
  "resourceVersion=-5",
  "resourceVersion=99999999999&resourceVersionMatch=Exact",
  "resourceVersionMatch=Bogus",
  "watch=maybe&timeoutSeconds=1",
  "watch=true&timeoutSeconds=1&resourceVersion=1",
  "timeoutSeconds=-1",
  "fieldValidation=Bogus",
  "dryRun=Sometimes",
  "gracePeriodSeconds=abc",
  "gracePeriodSeconds=-100",
  "propagationPolicy=Sideways",
  "includeObject=Everything",
  "fieldManager=" + "m".repeat(200),
  "force=maybe",
  "pretty=%ff",
  "%zz=1",
];

/** Request number `index` of the run seeded with `seed`. */
export function fuzzRequest(seed: number, index: number): FuzzRequest {
  const r = new Random(mulberry32(seed * 1_000_003 + index));
  const sample = r.pick(samples);
  const query = r.chance(0.4) ? `?${r.pick(queries)}${r.chance(0.3) ? `&${r.pick(queries)}` : ""}` : "";
  const name = r.chance(0.2) ? r.pick(badNames) : String((sample.object().metadata as { name: string }).name);
  const sub = r.chance(0.15) ? `/${r.pick(["status", "scale", "binding", "log", "finalize", "bogus"])}` : "";
  const headers: Record<string, string> = {};
  if (r.chance(0.2))
    headers.accept = r.pick([
      "application/json;as=Table;v=v1;g=meta.k8s.io",
      "application/json;as=Bogus",
      "text/html",
      "application/json;as=Table;v=v9;g=meta.k8s.io",
      ";;;",
      "application/yaml",
    ]);
  switch (r.int(6)) {
    case 0:
    case 1: {
      const b = body(r, sample);
      headers["content-type"] = b.type;
      return {
        method: "POST",
        path: `${sample.path}${query}`,
        headers,
        body: b.bytes,
        note: `create ${sample.kind}: ${b.note}`,
      };
    }
    case 2: {
      const b = body(r, sample);
      headers["content-type"] = b.type;
      return {
        method: "PUT",
        path: `${sample.path}/${name}${sub}${query}`,
        headers,
        body: b.bytes,
        note: `update ${sample.kind}: ${b.note}`,
      };
    }
    case 3: {
      const p = patch(r);
      headers["content-type"] = r.chance(0.05) ? "application/bogus-patch" : p.type;
      const q = p.type.includes("apply") ? `?fieldManager=fuzz${query ? `&${query.slice(1)}` : ""}` : query;
      return {
        method: "PATCH",
        path: `${sample.path}/${name}${sub}${q}`,
        headers,
        body: p.bytes,
        note: `patch ${sample.kind}: ${p.note}`,
      };
    }
    case 4: {
      const delBody = r.chance(0.5)
        ? Buffer.from(
            JSON.stringify(
              r.pick([
                { kind: "DeleteOptions", apiVersion: "v1", gracePeriodSeconds: "x" },
                { preconditions: { uid: 5 } },
                [],
                { propagationPolicy: "Up" },
                { dryRun: ["x"] },
              ]),
            ),
          )
        : undefined;
      if (delBody) headers["content-type"] = "application/json";
      return {
        method: "DELETE",
        path: `${sample.path}${r.chance(0.7) ? `/${name}` : ""}${query}`,
        headers,
        body: delBody,
        note: `delete ${sample.kind}`,
      };
    }
    default:
      // HEAD only without a query: its answer has no body to tell a retryable 504 by.
      return {
        method: query ? "GET" : r.pick(["GET", "GET", "HEAD", "OPTIONS", "TRACE"]),
        path: `${sample.path}${r.chance(0.5) ? `/${name}${sub}` : ""}${query}`,
        headers,
        note: `read ${sample.kind}`,
      };
  }
}
// #endregion requests
