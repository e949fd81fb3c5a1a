import { describe, expect, it } from "vitest";
import {
  validateConfigMap,
  validateConfigMapUpdate,
  validateEndpoints,
  validateEvent,
  validateNamespace,
  validateNamespaceStatusUpdate,
  validateNode,
  validateNodeUpdate,
  validateSecret,
  validateSecretUpdate,
  validateService,
  validateServiceAccount,
  validateServiceUpdate,
} from "./core-validation.ts";
import { setDefaults } from "./defaults.ts";
import { type FieldError, fieldErrorToString } from "./field-errors.ts";
import type { KubeObject } from "./meta.ts";

// Expected texts follow Kubernetes v1.32's pkg/apis/core/validation/validation.go and events.go.

const text = (errors: FieldError[]): string[] => errors.map(fieldErrorToString);
// biome-ignore lint/suspicious/noExplicitAny: tests build and poke at arbitrary JSON objects
type Json = Record<string, any>;
const defaulted = (o: Json): KubeObject => {
  setDefaults(o as KubeObject);
  return o as KubeObject;
};

const DNS1123_LABEL_ERR =
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";

describe("Namespace", () => {
  it("names are DNS labels; status phase follows deletion", () => {
    const ns = defaulted({
      apiVersion: "v1",
      kind: "Namespace",
      metadata: { name: "team-a" },
      spec: { finalizers: ["kubernetes"] },
    });
    expect(validateNamespace(ns)).toEqual([]);
    expect(
      text(validateNamespace({ apiVersion: "v1", kind: "Namespace", metadata: { name: "team.a" } })),
    ).toEqual(['metadata.name: Invalid value: "team.a": must not contain dots']);
    expect(
      text(
        validateNamespace({
          apiVersion: "v1",
          kind: "Namespace",
          metadata: { name: "a", namespace: "b" },
          spec: { finalizers: ["x"] },
        }),
      ),
    ).toEqual([
      "metadata.namespace: Forbidden: not allowed on this type",
      'spec.finalizers: Invalid value: "x": name is neither a standard finalizer name nor is it fully qualified',
    ]);
    const live = { ...ns, metadata: { ...ns.metadata, resourceVersion: "1" } };
    const terminating = { ...live, status: { phase: "Terminating" } };
    expect(text(validateNamespaceStatusUpdate(terminating, live))).toEqual([
      "status.Phase: Invalid value: \"Terminating\": may only be 'Active' if `deletionTimestamp` is empty",
    ]);
  });
});

describe("Node", () => {
  const node = (): Json => ({
    apiVersion: "v1",
    kind: "Node",
    metadata: { name: "node-1", resourceVersion: "3" },
    spec: { podCIDRs: ["10.244.1.0/24"], taints: [{ key: "dedicated", value: "gpu", effect: "NoSchedule" }] },
    status: { capacity: { cpu: "4", memory: "8Gi", pods: "110" } },
  });

  it("accepts a kubelet-registered node", () => {
    expect(validateNode(defaulted(node()))).toEqual([]);
  });

  it("reports taints under metadata.taints, as upstream does", () => {
    const n = node();
    n.spec.taints = [
      { key: "a", effect: "" },
      { key: "b", value: "x", effect: "Evict" },
      { key: "c", effect: "NoSchedule" },
      { key: "c", effect: "NoSchedule" },
    ];
    n.status.capacity = { cpu: "-1", pods: "1.5" };
    n.spec.podCIDRs = ["10.244.1.0/33"];
    expect(text(validateNode(n as KubeObject))).toEqual([
      "metadata.taints[0].effect: Required value",
      'metadata.taints[1].effect: Unsupported value: "Evict": supported values: "NoSchedule", "PreferNoSchedule", "NoExecute"',
      'metadata.taints[3]: Duplicate value: core.Taint{Key:"c", Value:"", Effect:"NoSchedule", TimeAdded:(*v1.Time)(nil)}: taints must be unique by key and effect pair',
      'status.capacity.cpu: Invalid value: "-1": must be greater than or equal to 0',
      'status.capacity.pods: Invalid value: "1.5": must be an integer',
      'spec.podCIDRs[0]: Invalid value: "10.244.1.0/33": must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)',
    ]);
  });

  it("keeps pod CIDRs and provider ID once set; lets status and taints change", () => {
    const old = node();
    old.spec.providerID = "kind://node-1";
    const updated = structuredClone(old);
    updated.spec.taints = [];
    updated.spec.unschedulable = true;
    updated.status.conditions = [{ type: "Ready", status: "True" }];
    expect(validateNodeUpdate(updated as KubeObject, old as KubeObject)).toEqual([]);
    updated.spec.podCIDRs = ["10.244.2.0/24"];
    updated.spec.providerID = "other";
    expect(text(validateNodeUpdate(updated as KubeObject, old as KubeObject))).toEqual([
      'spec.podCIDRs: Forbidden: node updates may not change podCIDR except from "" to valid',
      'spec.providerID: Forbidden: node updates may not change providerID except from "" to valid',
    ]);
  });
});

describe("ConfigMap, Secret, ServiceAccount", () => {
  it("ConfigMap keys and the 1 MiB limit", () => {
    const cm = {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "app", namespace: "default" },
      data: { "app.conf": "x" },
    };
    expect(validateConfigMap(cm)).toEqual([]);
    const bad = { ...cm, data: { "a/b": "x", dup: "1" }, binaryData: { dup: "AA==" } };
    expect(text(validateConfigMap(bad))).toEqual([
      "data[a/b]: Invalid value: \"a/b\": a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')",
      'data[dup]: Invalid value: "dup": duplicate of key present in binaryData',
    ]);
    const big = { ...cm, data: { a: "x".repeat(1024 * 1024), b: "y" } };
    expect(text(validateConfigMap(big))).toEqual([": Too long: may not be more than 1048576 bytes"]);
  });

  it("an immutable ConfigMap keeps its data", () => {
    const old = {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "app", namespace: "default", resourceVersion: "1" },
      data: { a: "1" },
      immutable: true,
    };
    expect(text(validateConfigMapUpdate({ ...old, data: { a: "2" }, immutable: false }, old))).toEqual([
      "immutable: Forbidden: field is immutable when `immutable` is set",
      "data: Forbidden: field is immutable when `immutable` is set",
    ]);
  });

  it("Secret size counts decoded bytes; typed secrets need their keys; type is immutable", () => {
    const secret = defaulted({
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name: "s", namespace: "default" },
      data: { password: "c2VjcmV0" },
    });
    expect(validateSecret(secret)).toEqual([]);
    const tls = { ...secret, type: "kubernetes.io/tls", data: { "tls.crt": "AA==" } };
    expect(text(validateSecret(tls))).toEqual(["data[tls.key]: Required value"]);
    const sa = { ...secret, type: "kubernetes.io/service-account-token" };
    expect(text(validateSecret(sa))).toEqual([
      "metadata.annotations[kubernetes.io/service-account.name]: Required value",
    ]);
    // 1 MiB + 1 byte once decoded (base64 grows it by a third, which must not count).
    const big = { ...secret, data: { blob: Buffer.alloc(1024 * 1024 + 1).toString("base64") } };
    expect(text(validateSecret(big))).toEqual(["data: Too long: may not be more than 1048576 bytes"]);
    const exact = { ...secret, data: { blob: Buffer.alloc(1024 * 1024).toString("base64") } };
    expect(validateSecret(exact)).toEqual([]);
    const old = { ...secret, metadata: { ...secret.metadata, resourceVersion: "1" } };
    expect(
      text(
        validateSecretUpdate({ ...old, type: "kubernetes.io/basic-auth", data: { username: "YQ==" } }, old),
      ),
    ).toEqual(['type: Invalid value: "kubernetes.io/basic-auth": field is immutable']);
  });

  it("ServiceAccount names are subdomains", () => {
    expect(
      validateServiceAccount({
        apiVersion: "v1",
        kind: "ServiceAccount",
        metadata: { name: "ci.bot", namespace: "d" },
      }),
    ).toEqual([]);
  });
});

describe("Service", () => {
  const service = (spec: Json, name = "web"): KubeObject =>
    defaulted({
      apiVersion: "v1",
      kind: "Service",
      metadata: { name, namespace: "default", resourceVersion: "1" },
      spec,
    });

  it("accepts ClusterIP, NodePort, headless and ExternalName services", () => {
    expect(validateService(service({ selector: { app: "web" }, ports: [{ port: 80 }] }))).toEqual([]);
    expect(validateService(service({ type: "NodePort", ports: [{ port: 80, nodePort: 30080 }] }))).toEqual(
      [],
    );
    expect(validateService(service({ clusterIP: "None", selector: { app: "db" } }))).toEqual([]);
    expect(validateService(service({ type: "ExternalName", externalName: "db.example.com." }))).toEqual([]);
  });

  it("names are DNS-1035 labels", () => {
    expect(text(validateService(service({ ports: [{ port: 80 }] }, "1web")))).toEqual([
      "metadata.name: Invalid value: \"1web\": a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')",
    ]);
  });

  it.each<[string, Json, string[]]>([
    ["no ports", { selector: { app: "web" } }, ["spec.ports: Required value"]],
    [
      "several ports need names; ports in range; targetPort",
      { ports: [{ port: 80 }, { name: "Https", port: 0, targetPort: "--" }] },
      [
        "spec.ports[0].name: Required value",
        `spec.ports[1].name: Invalid value: "Https": ${DNS1123_LABEL_ERR}`,
        "spec.ports[1].port: Invalid value: 0: must be between 1 and 65535, inclusive",
        'spec.ports[1].targetPort: Invalid value: "--": must contain at least one letter (a-z)',
        'spec.ports[1].targetPort: Invalid value: "--": must not contain consecutive hyphens',
        'spec.ports[1].targetPort: Invalid value: "--": must not begin or end with a hyphen',
      ],
    ],
    [
      "duplicate (protocol, port), node port on ClusterIP",
      {
        ports: [
          { name: "a", port: 80 },
          { name: "b", port: 80, nodePort: 30000 },
        ],
      },
      [
        "spec.ports[1].nodePort: Forbidden: may not be used when `type` is 'ClusterIP'",
        'spec.ports[1]: Duplicate value: core.ServicePort{Name:"", Protocol:"TCP", AppProtocol:(*string)(nil), Port:80, TargetPort:intstr.IntOrString{Type:0, IntVal:0, StrVal:""}, NodePort:0}',
      ],
    ],
    [
      "unknown type",
      { type: "Ingress", ports: [{ port: 80 }] },
      [
        'spec.type: Unsupported value: "Ingress": supported values: "ClusterIP", "ExternalName", "LoadBalancer", "NodePort"',
      ],
    ],
    [
      "external traffic policy on an internal service",
      { ports: [{ port: 80 }], externalTrafficPolicy: "Local" },
      [
        'spec.externalTrafficPolicy: Invalid value: "Local": may only be set for externally-accessible services',
      ],
    ],
    [
      "headless NodePort",
      { type: "NodePort", clusterIP: "None", ports: [{ port: 80 }] },
      ["spec.clusterIPs[0]: Invalid value: \"None\": may not be set to 'None' for NodePort services"],
    ],
  ])("%s", (_name, spec, expected) => {
    expect(text(validateService(service(spec)))).toEqual(expected);
  });

  it("keeps the allocated cluster IP", () => {
    const old = service({ ports: [{ port: 80 }], clusterIP: "10.96.0.10", clusterIPs: ["10.96.0.10"] });
    const moved = structuredClone(old) as Json;
    moved.spec.clusterIP = "10.96.0.11";
    moved.spec.clusterIPs = ["10.96.0.11"];
    expect(text(validateServiceUpdate(moved as KubeObject, old))).toEqual([
      'spec.clusterIPs[0]: Invalid value: "10.96.0.11": may not change once set',
    ]);
  });
});

describe("Endpoints and Event", () => {
  it("endpoint addresses must be real, routable IPs", () => {
    const ep = (subsets: Json[]): KubeObject =>
      defaulted({
        apiVersion: "v1",
        kind: "Endpoints",
        metadata: { name: "web", namespace: "default" },
        subsets,
      });
    expect(
      validateEndpoints(
        ep([{ addresses: [{ ip: "10.244.1.5", nodeName: "node-1" }], ports: [{ port: 80 }] }]),
      ),
    ).toEqual([]);
    expect(
      text(
        validateEndpoints(
          ep([
            { ports: [{ port: 80 }] },
            { addresses: [{ ip: "127.0.0.1" }, { ip: "nope" }], ports: [{ port: 80 }, { port: 81 }] },
          ]),
        ),
      ),
    ).toEqual([
      "subsets[0]: Required value: must specify `addresses` or `notReadyAddresses`",
      'subsets[1].addresses[0].ip: Invalid value: "127.0.0.1": may not be in the loopback range (127.0.0.0/8, ::1/128)',
      'subsets[1].addresses[1].ip: Invalid value: "nope": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)',
      'subsets[1].addresses[1].ip: Invalid value: "nope": must be a valid IP address',
      "subsets[1].ports[0].name: Required value",
      "subsets[1].ports[1].name: Required value",
    ]);
  });

  it("a core/v1 event's namespace must match its involved object's", () => {
    const event = (ns: string, involved: string): KubeObject => ({
      apiVersion: "v1",
      kind: "Event",
      metadata: { name: "web.17a", namespace: ns },
      involvedObject: { kind: "Pod", name: "web", namespace: involved },
      reason: "Scheduled",
    });
    expect(validateEvent(event("default", "default"))).toEqual([]);
    expect(validateEvent(event("default", ""))).toEqual([]);
    expect(text(validateEvent(event("team", "default")))).toEqual([
      'involvedObject.namespace: Invalid value: "default": does not match event.namespace',
    ]);
  });
});
