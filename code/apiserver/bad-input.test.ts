// Bad input over HTTP, answered as upstream's API server answers it (issue 11): wrongly typed
// values, unknown and duplicate fields on every write path, malformed patches. One API server on
// the embedded store: these are decoding questions, the same on every storage backend.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { type APIServer, startAPIServer } from "./server.ts";
import { encodeProtobuf } from "./testing/schema-values.ts";

let server: APIServer;
beforeAll(async () => {
  server = await startAPIServer({ insecurePort: 0 });
});
afterAll(async () => {
  await server?.close();
});

// biome-ignore lint/suspicious/noExplicitAny: the tests read arbitrary JSON answers
type Json = any;

async function call(
  method: string,
  path: string,
  body?: unknown,
  contentType = "application/json",
): Promise<{ code: number; body: Json; headers: Headers }> {
  const init: RequestInit = { method, headers: {} };
  if (body !== undefined) {
    init.body = typeof body === "string" || body instanceof Buffer ? body : JSON.stringify(body);
    (init.headers as Record<string, string>)["Content-Type"] = contentType;
  }
  const res = await fetch(`${server.url}${path}`, init);
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {}
  return { code: res.status, body: parsed, headers: res.headers };
}

const pods = "/api/v1/namespaces/default/pods";
const container = { name: "c", image: "nginx" };
const pod = (name: string, spec: object = {}) => ({
  apiVersion: "v1",
  kind: "Pod",
  metadata: { name },
  spec: { containers: [container], ...spec },
});
const handled = 'Pod in version "v1" cannot be handled as a Pod: ';

describe("typed decoding on create and update", () => {
  it('refuses terminationGracePeriodSeconds: "thirty" with upstream\'s 400, and stores nothing', async () => {
    const r = await call("POST", pods, pod("thirty", { terminationGracePeriodSeconds: "thirty" }));
    expect(r.code).toBe(400);
    expect(r.body).toMatchObject({ kind: "Status", reason: "BadRequest", code: 400 });
    expect(r.body.message).toBe(
      `${handled}json: cannot unmarshal string into Go struct field PodSpec.spec.terminationGracePeriodSeconds of type int64`,
    );
    expect((await call("GET", `${pods}/thirty`)).code).toBe(404);
  });

  it('answers containerPort: "eighty" with the decode error, not "Required value"', async () => {
    const r = await call(
      "POST",
      pods,
      pod("eighty", { containers: [{ ...container, ports: [{ containerPort: "eighty" }] }] }),
    );
    expect(r.code).toBe(400);
    expect(r.body.message).toBe(
      `${handled}json: cannot unmarshal string into Go struct field ContainerPort.spec.containers.ports.containerPort of type int32`,
    );
  });

  it("answers cpu: {}, containers: {} and a list for an object with 400s, never a 500", async () => {
    const cpu = await call(
      "POST",
      pods,
      pod("cpu", { containers: [{ ...container, resources: { limits: { cpu: {} } } }] }),
    );
    expect(cpu.code).toBe(400);
    expect(cpu.body.message).toBe(
      `${handled}quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'`,
    );
    const containers = await call("POST", pods, pod("containers", { containers: {} }));
    expect(containers.code).toBe(400);
    expect(containers.body.message).toBe(
      `${handled}json: cannot unmarshal object into Go struct field PodSpec.spec.containers of type []v1.Container`,
    );
    const spec = await call("POST", pods, { ...pod("spec"), spec: [container] });
    expect(spec.code).toBe(400);
    expect(spec.body.message).toBe(
      `${handled}json: cannot unmarshal array into Go struct field Pod.spec of type v1.PodSpec`,
    );
    const list = await call("POST", pods, [pod("list")]);
    expect(list.code).toBe(400);
    expect(list.body.message).toMatch(
      /^the object provided is unrecognized \(must be of type Pod\): couldn't get version\/kind; json parse error: json: cannot unmarshal array into Go value of type struct/,
    );
  });

  it("decodes YAML bodies against the same types", async () => {
    const yaml =
      "apiVersion: v1\nkind: Pod\nmetadata:\n  name: y\nspec:\n  hostNetwork: maybe\n  containers:\n  - name: c\n    image: nginx\n";
    const r = await call("POST", pods, yaml, "application/yaml");
    expect(r.code).toBe(400);
    expect(r.body.message).toBe(
      `${handled}json: cannot unmarshal string into Go struct field PodSpec.spec.hostNetwork of type bool`,
    );
  });

  it("refuses a wrongly typed value on update (PUT) too", async () => {
    expect((await call("POST", pods, pod("put"))).code).toBe(201);
    const current = (await call("GET", `${pods}/put`)).body;
    current.spec.activeDeadlineSeconds = true;
    const r = await call("PUT", `${pods}/put`, current);
    expect(r.code).toBe(400);
    expect(r.body.message).toBe(
      `${handled}json: cannot unmarshal bool into Go struct field PodSpec.spec.activeDeadlineSeconds of type int64`,
    );
  });

  it("reports duplicate fields: refused under Strict, a warning by default", async () => {
    const body = `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"dup","name":"dup"},"spec":{"containers":[{"name":"c","image":"nginx"}]}}`;
    const strict = await call("POST", `${pods}?fieldValidation=Strict`, body);
    expect(strict.code).toBe(400);
    expect(strict.body.message).toBe(`${handled}strict decoding error: duplicate field "metadata.name"`);
    const warn = await call("POST", pods, body);
    expect(warn.code).toBe(201);
    expect(warn.headers.get("warning")).toBe('299 - "duplicate field \\"metadata.name\\""');
  });

  it("sends a warning that quotes non-Latin-1 input as UTF-8, not a broken header", async () => {
    const r = await call("POST", pods, {
      ...pod("utf8"),
      spec: { containers: [container], "naïve→\u2028": 1 },
    });
    expect(r.code).toBe(201);
    const raw = Buffer.from(r.headers.get("warning") ?? "", "latin1").toString("utf8");
    expect(raw).toBe('299 - "unknown field \\"spec.naïve→\u2028\\""');
  });
});

describe("server-side apply checks its configuration against the schema", () => {
  const apply = (name: string, extra: string, query = "fieldValidation=Strict") =>
    call(
      "PATCH",
      `${pods}/${name}?fieldManager=kubectl&${query}`,
      `apiVersion: v1\nkind: Pod\nmetadata:\n  name: ${name}\nspec:\n  containers:\n  - name: c\n    image: nginx\n${extra}`,
      "application/apply-patch+yaml",
    );

  it("refuses an unknown field with structured-merge-diff's words, under every fieldValidation (a 400, where upstream answers 500)", async () => {
    for (const query of ["fieldValidation=Strict", "fieldValidation=Warn", "fieldValidation=Ignore"]) {
      const r = await apply("ssa-unknown", "  foo: 1\n", query);
      expect(r.code, query).toBe(400);
      expect(r.body.message).toBe(
        "failed to create typed patch object (default/ssa-unknown; /v1, Kind=Pod): .spec.foo: field not declared in schema",
      );
    }
    expect((await call("GET", `${pods}/ssa-unknown`)).code).toBe(404);
  });

  it("refuses a wrongly typed value and two list items with one key", async () => {
    const typed = await apply("ssa-typed", "  terminationGracePeriodSeconds: thirty\n");
    expect(typed.code).toBe(400);
    expect(typed.body.message).toBe(
      "failed to create typed patch object (default/ssa-typed; /v1, Kind=Pod): .spec.terminationGracePeriodSeconds: expected numeric (int or float), got string",
    );
    const twice = await apply("ssa-twice", "  - name: c\n    image: busybox\n");
    expect(twice.code).toBe(400);
    expect(twice.body.message).toBe(
      'failed to create typed patch object (default/ssa-twice; /v1, Kind=Pod): .spec.containers: duplicate entries for key [name="c"]',
    );
  });

  it("refuses a duplicate key under Strict, warns under Warn, says nothing under Ignore", async () => {
    const twice = "  hostNetwork: true\n  hostNetwork: false\n";
    const strict = await apply("ssa-dup", twice);
    expect(strict.code).toBe(400);
    expect(strict.body.message).toBe(
      'error strict decoding YAML: error converting YAML to JSON: yaml: unmarshal errors:\n  line 10: key "hostNetwork" already set in map',
    );
    const warn = await apply("ssa-dup", twice, "fieldValidation=Warn");
    expect(warn.code).toBe(201);
    expect(warn.headers.get("warning")).toContain('key \\"hostNetwork\\" already set in map');
    const ignore = await apply("ssa-dup", twice, "fieldValidation=Ignore");
    expect(ignore.code).toBe(200);
    expect(ignore.headers.get("warning")).toBeNull();
  });
});

describe("patches are decoded as the kind's type after they apply", () => {
  it("refuses a merge patch that makes a field the wrong type (422, patch: Invalid value)", async () => {
    expect((await call("POST", pods, pod("patched"))).code).toBe(201);
    const r = await call(
      "PATCH",
      `${pods}/patched`,
      { spec: { activeDeadlineSeconds: "soon" } },
      "application/merge-patch+json",
    );
    expect(r.code).toBe(422);
    expect(r.body.reason).toBe("Invalid");
    expect(r.body.message).toMatch(
      /^ "" is invalid: patch: Invalid value: "\{.*\}": json: cannot unmarshal string into Go struct field PodSpec\.spec\.activeDeadlineSeconds of type int64$/,
    );
  });

  it("applies fieldValidation to strategic merge patches: Strict refuses, Warn warns and drops", async () => {
    const strict = await call(
      "PATCH",
      `${pods}/patched?fieldValidation=Strict`,
      { spec: { foo: 1 } },
      "application/strategic-merge-patch+json",
    );
    expect(strict.code).toBe(422);
    expect(strict.body.message).toBe(
      ' "" is invalid: patch: Invalid value: "map[spec:map[foo:1]]": strict decoding error: unknown field "spec.foo"',
    );
    const warn = await call(
      "PATCH",
      `${pods}/patched`,
      { spec: { foo: 1 } },
      "application/strategic-merge-patch+json",
    );
    expect(warn.code).toBe(200);
    expect(warn.headers.get("warning")).toBe('299 - "unknown field \\"spec.foo\\""');
    expect(warn.body.spec.foo).toBeUndefined();
  });

  it("reports a duplicate key in the patch body itself", async () => {
    const r = await call(
      "PATCH",
      `${pods}/patched?fieldValidation=Strict`,
      '{"metadata":{"labels":{"a":"1","a":"2"}}}',
      "application/merge-patch+json",
    );
    expect(r.code).toBe(422);
    expect(r.body.message).toContain('strict decoding error: duplicate field "metadata.labels.a"');
  });
});

describe("scheduling fields round-trip through JSON, YAML and protobuf", () => {
  const scheduling = {
    affinity: {
      nodeAffinity: {
        requiredDuringSchedulingIgnoredDuringExecution: {
          nodeSelectorTerms: [{ matchExpressions: [{ key: "disk", operator: "In", values: ["ssd"] }] }],
        },
      },
      podAntiAffinity: {
        preferredDuringSchedulingIgnoredDuringExecution: [
          {
            weight: 50,
            podAffinityTerm: {
              labelSelector: { matchLabels: { app: "web" } },
              topologyKey: "kubernetes.io/hostname",
            },
          },
        ],
      },
    },
    topologySpreadConstraints: [
      {
        maxSkew: 1,
        topologyKey: "topology.kubernetes.io/zone",
        whenUnsatisfiable: "DoNotSchedule",
        labelSelector: { matchLabels: { app: "web" } },
      },
    ],
    schedulingGates: [{ name: "example.com/quota" }],
  };
  const cases: [string, string, (name: string) => unknown][] = [
    ["JSON", "application/json", (name) => pod(name, scheduling)],
    ["YAML", "application/yaml", (name) => stringify(pod(name, scheduling))],
    [
      "protobuf",
      "application/vnd.kubernetes.protobuf",
      (name) => encodeProtobuf("v1", "Pod", pod(name, scheduling)),
    ],
  ];
  for (const [format, contentType, body] of cases) {
    it(`keeps affinity, topologySpreadConstraints and schedulingGates sent as ${format}`, async () => {
      const name = `sched-${format.toLowerCase()}`;
      const r = await call("POST", `${pods}?fieldValidation=Strict`, body(name), contentType);
      expect(r.code, JSON.stringify(r.body)).toBe(201);
      const got = (await call("GET", `${pods}/${name}`)).body;
      expect(got.spec.affinity).toEqual(scheduling.affinity);
      expect(got.spec.topologySpreadConstraints).toEqual(scheduling.topologySpreadConstraints);
      expect(got.spec.schedulingGates).toEqual(scheduling.schedulingGates);
    });
  }
});
