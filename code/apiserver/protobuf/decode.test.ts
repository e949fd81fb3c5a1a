import { readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { isStatusError, type StatusError } from "../errors.ts";
import { decodeProtobuf, protoEncodingPrefix } from "./decode.ts";
import { messageFor, protoRoot, UNKNOWN } from "./registry.ts";

const testdata = join(dirname(fileURLToPath(import.meta.url)), "testdata");
const fixture = (name: string) => new Uint8Array(readFileSync(join(testdata, name)));

/** The body kubectl would send: magic, then runtime.Unknown{typeMeta, raw}. */
function envelope(apiVersion: string, kind: string, raw: Uint8Array): Uint8Array {
  const unknown = protoRoot().lookupType(UNKNOWN);
  const bytes = unknown.encode(unknown.create({ typeMeta: { apiVersion, kind }, raw })).finish();
  return new Uint8Array([...protoEncodingPrefix, ...bytes]);
}

function encode(apiVersion: string, kind: string, object: Record<string, unknown>): Uint8Array {
  const t = messageFor(apiVersion, kind);
  if (!t) throw new Error(`no message for ${apiVersion} ${kind}`);
  return envelope(apiVersion, kind, t.encode(t.fromObject(object)).finish());
}

function statusOf(f: () => unknown): StatusError {
  try {
    f();
  } catch (e) {
    if (isStatusError(e)) return e;
    throw e;
  }
  throw new Error("expected a StatusError");
}

describe("decodeProtobuf on bodies captured from kubectl", () => {
  const names = readdirSync(testdata)
    .filter((f) => f.endsWith(".pb") && readdirSync(testdata).includes(f.replace(/\.pb$/, ".json")))
    .map((f) => f.replace(/\.pb$/, ""));

  it("has the fixtures", () => {
    expect(names.length).toBeGreaterThanOrEqual(10);
  });

  it.each(names)("%s equals kubectl's own JSON of the same object", (name) => {
    const want = JSON.parse(readFileSync(join(testdata, `${name}.json`), "utf8"));
    const got = decodeProtobuf(fixture(`${name}.pb`));
    expect(got).toEqual(want);
    // Go writes kind, then apiVersion, then the fields in struct order.
    expect(Object.keys(got)).toEqual(Object.keys(want));
  });

  it("decodes the SelfSubjectAccessReview of `kubectl auth can-i` (status.allowed has no omitempty)", () => {
    expect(decodeProtobuf(fixture("selfsubjectaccessreview.pb"))).toEqual({
      kind: "SelfSubjectAccessReview",
      apiVersion: "authorization.k8s.io/v1",
      metadata: { creationTimestamp: null },
      spec: {
        resourceAttributes: {
          namespace: "kube-system",
          verb: "list",
          group: "apps",
          resource: "deployments",
          subresource: "status",
        },
      },
      status: { allowed: false },
    });
  });
});

describe("Go's JSON rules", () => {
  it("writes an unset pointer without omitempty as null (TokenRequest of `kubectl create token default`)", () => {
    expect(decodeProtobuf(fixture("tokenrequest.pb"))).toEqual({
      kind: "TokenRequest",
      apiVersion: "authentication.k8s.io/v1",
      metadata: { creationTimestamp: null },
      spec: { audiences: null, expirationSeconds: null, boundObjectRef: null },
      status: { token: "", expirationTimestamp: null },
    });
  });

  it("writes times as RFC 3339 (seconds for Time, microseconds for MicroTime), the zero time as null", () => {
    const lease = decodeProtobuf(
      encode("coordination.k8s.io/v1", "Lease", {
        metadata: { name: "node-1", creationTimestamp: { seconds: 1700000000 } },
        spec: {
          holderIdentity: "node-1",
          leaseDurationSeconds: 40,
          renewTime: { seconds: 1700000000, nanos: 123456789 },
          acquireTime: {},
        },
      }),
    );
    expect(lease.metadata.creationTimestamp).toBe("2023-11-14T22:13:20Z");
    expect(lease.spec).toEqual({
      holderIdentity: "node-1",
      leaseDurationSeconds: 40,
      acquireTime: null,
      renewTime: "2023-11-14T22:13:20.123456Z",
    });
  });

  it("keeps a zero pointer, drops a zero omitempty scalar, keeps a zero without omitempty", () => {
    const pod = decodeProtobuf(
      encode("v1", "Pod", {
        metadata: { name: "p", generation: 0, deletionGracePeriodSeconds: 0 },
        spec: {
          containers: [
            {
              name: "c",
              stdin: false,
              ports: [{ containerPort: 0, hostPort: 0 }],
              securityContext: { privileged: false },
            },
          ],
          terminationGracePeriodSeconds: 0,
          hostNetwork: false,
        },
      }),
    );
    expect(pod.metadata).toEqual({ name: "p", creationTimestamp: null, deletionGracePeriodSeconds: 0 });
    expect(pod.spec).toEqual({
      containers: [
        { name: "c", ports: [{ containerPort: 0 }], resources: {}, securityContext: { privileged: false } },
      ],
      terminationGracePeriodSeconds: 0,
    });
    expect(pod.status).toEqual({});
  });

  it("writes IntOrString as a bare number or string, Quantity as its string, and flattens embedded structs", () => {
    const pod = decodeProtobuf(
      encode("v1", "Pod", {
        spec: {
          containers: [
            {
              name: "web",
              resources: { requests: { cpu: { string: "100m" } }, limits: { memory: { string: "64Mi" } } },
              livenessProbe: {
                handler: { httpGet: { path: "/healthz", port: { type: 1, strVal: "http" } } },
              },
              readinessProbe: {
                handler: { tcpSocket: { port: { type: 0, intVal: 8080 } } },
                periodSeconds: 5,
              },
              env: [
                {
                  name: "K",
                  valueFrom: { configMapKeyRef: { localObjectReference: { name: "cfg" }, key: "k" } },
                },
              ],
            },
          ],
          volumes: [{ name: "scratch", volumeSource: { emptyDir: {} } }],
        },
      }),
    );
    const [c] = (pod.spec as { containers: Record<string, unknown>[] }).containers;
    expect(c.resources).toEqual({ limits: { memory: "64Mi" }, requests: { cpu: "100m" } });
    expect(c.livenessProbe).toEqual({ httpGet: { path: "/healthz", port: "http" } });
    expect(c.readinessProbe).toEqual({ tcpSocket: { port: 8080 }, periodSeconds: 5 });
    expect(c.env).toEqual([{ name: "K", valueFrom: { configMapKeyRef: { name: "cfg", key: "k" } } }]);
    expect((pod.spec as Record<string, unknown>).volumes).toEqual([{ name: "scratch", emptyDir: {} }]);
  });

  it("writes a list without omitempty as null when empty (PodSpec.containers)", () => {
    const pod = decodeProtobuf(encode("v1", "Pod", { metadata: { name: "empty" }, spec: {} }));
    expect(pod.spec).toEqual({ containers: null });
  });
});

describe("bad bodies are Status errors, never crashes", () => {
  it("refuses bytes without the k8s\\0 prefix (400, upstream's message)", () => {
    const e = statusOf(() => decodeProtobuf(new TextEncoder().encode('{"kind":"Pod"}')));
    expect(e.code).toBe(400);
    expect(e.reason).toBe("BadRequest");
    expect(e.message).toBe(
      "provided data does not appear to be a protobuf message, expected prefix [107 56 115 0]",
    );
    expect(statusOf(() => decodeProtobuf(new Uint8Array([0x6b, 0x38]))).code).toBe(400);
  });

  it("refuses a truncated body (400)", () => {
    const whole = fixture("deployment.pb");
    const e = statusOf(() => decodeProtobuf(whole.subarray(0, whole.length - 20)));
    expect(e.code).toBe(400);
    expect(e.message).toMatch(/^unable to decode protobuf body: /);
  });

  it("refuses a kind no group serves (400), and decodes Node and Endpoints against their messages", () => {
    const e = statusOf(() => decodeProtobuf(envelope("v1", "Widget", new Uint8Array())));
    expect([e.code, e.message]).toEqual([400, 'no kind "Widget" is registered for version "v1"']);
    const node = messageFor("v1", "Node");
    const endpoints = messageFor("v1", "Endpoints");
    if (!node || !endpoints) throw new Error("no Node or Endpoints message");
    const taint = { key: "k", effect: "NoSchedule" };
    const n = node.encode(node.fromObject({ metadata: { name: "n1" }, spec: { taints: [taint] } })).finish();
    // Go writes the non-pointer structs of an empty status, as upstream's JSON of the same node.
    expect(decodeProtobuf(envelope("v1", "Node", n))).toMatchObject({
      kind: "Node",
      metadata: { name: "n1" },
      spec: { taints: [taint] },
      status: { daemonEndpoints: { kubeletEndpoint: { Port: 0 } }, nodeInfo: { kubeletVersion: "" } },
    });
    const subset = { addresses: [{ ip: "10.0.0.1" }], ports: [{ port: 80 }] };
    const ep = endpoints
      .encode(endpoints.fromObject({ metadata: { name: "s" }, subsets: [subset] }))
      .finish();
    expect(decodeProtobuf(envelope("v1", "Endpoints", ep))).toMatchObject({ subsets: [subset] });
  });

  it("refuses a field number our .proto does not declare, rather than dropping it", () => {
    const ns = messageFor("v1", "Namespace");
    if (!ns) throw new Error("no Namespace message");
    const known = ns.encode(ns.fromObject({ metadata: { name: "x" } })).finish();
    // Field 40 of ObjectMeta, wire type 2 (length-delimited), one byte "a".
    const meta = new Uint8Array([...known.subarray(2), 0xc2, 0x02, 0x01, 0x61]);
    const raw = new Uint8Array([0x0a, meta.length, ...meta]);
    const e = statusOf(() => decodeProtobuf(envelope("v1", "Namespace", raw)));
    expect(e.code).toBe(400);
    expect(e.message).toContain("field number 40 of k8s.io.api.core.v1.Namespace.metadata is not known");
  });
});
