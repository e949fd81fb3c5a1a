import { describe, expect, it } from "vitest";
import { setDefaults } from "./defaults.ts";
import { type FieldError, fieldErrorToString } from "./field-errors.ts";
import type { KubeObject } from "./meta.ts";
import { validatePod, validatePodTemplateSpec } from "./pod-validation.ts";

// Expected messages are Kubernetes v1.32's, built from the upstream sources cited in
// pod-validation.ts and the files for its parts (container-, env-, resource-, probe-, volume-,
// toleration- and affinity-validation.ts: pkg/apis/core/validation/validation.go and
// apimachinery's util/validation); the regex texts are copied from apimachinery's constants.

const DNS1123_LABEL =
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end " +
  "with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is " +
  "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
const DNS1123_SUBDOMAIN =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and " +
  "end with an alphanumeric character (e.g. 'example.com', regex used for validation is " +
  "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";

const text = (errors: FieldError[]): string[] => errors.map(fieldErrorToString);

// biome-ignore lint/suspicious/noExplicitAny: tests build and poke at arbitrary JSON objects
type Json = Record<string, any>;

/** A minimal pod as kubectl sends it, defaulted as the API server would before validating. */
function pod(mutate: (p: Json) => void = () => {}): KubeObject {
  const p: Json = {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name: "web", namespace: "default", resourceVersion: "7", uid: "u-1" },
    spec: { containers: [{ name: "web", image: "nginx:1.27" }] },
  };
  setDefaults(p as KubeObject);
  mutate(p);
  return p as KubeObject;
}

describe("validatePod (create)", () => {
  it("accepts a defaulted minimal pod, and one using every supported field correctly", () => {
    expect(validatePod(pod())).toEqual([]);
    const full = pod((p) => {
      p.spec.volumes = [
        { name: "data", emptyDir: {} },
        { name: "cfg", configMap: { name: "app", defaultMode: 420 } },
      ];
      p.spec.containers[0] = {
        ...p.spec.containers[0],
        command: ["nginx"],
        args: ["-g", "daemon off;"],
        env: [
          { name: "MODE", value: "prod" },
          { name: "POD_IP", valueFrom: { fieldRef: { apiVersion: "v1", fieldPath: "status.podIP" } } },
        ],
        ports: [{ name: "http", containerPort: 80, protocol: "TCP" }],
        resources: { requests: { cpu: "100m", memory: "64Mi" }, limits: { cpu: "1", memory: "128Mi" } },
        volumeMounts: [
          { name: "data", mountPath: "/data" },
          { name: "cfg", mountPath: "/etc/app" },
        ],
        livenessProbe: {
          httpGet: { path: "/healthz", port: "http", scheme: "HTTP" },
          initialDelaySeconds: 3,
          timeoutSeconds: 1,
          periodSeconds: 10,
          successThreshold: 1,
          failureThreshold: 3,
        },
        readinessProbe: {
          tcpSocket: { port: 80 },
          timeoutSeconds: 1,
          periodSeconds: 5,
          successThreshold: 2,
          failureThreshold: 3,
        },
        startupProbe: {
          exec: { command: ["true"] },
          timeoutSeconds: 1,
          periodSeconds: 1,
          successThreshold: 1,
          failureThreshold: 30,
        },
      };
      p.spec.nodeSelector = { "kubernetes.io/os": "linux" };
      p.spec.tolerations = [
        { key: "dedicated", operator: "Equal", value: "web", effect: "NoSchedule" },
        { operator: "Exists" },
      ];
      p.spec.affinity = {
        nodeAffinity: {
          requiredDuringSchedulingIgnoredDuringExecution: {
            nodeSelectorTerms: [{ matchExpressions: [{ key: "zone", operator: "In", values: ["a", "b"] }] }],
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
      };
      p.spec.priorityClassName = "high";
      p.spec.nodeName = "node-1";
    });
    expect(validatePod(full)).toEqual([]);
  });

  it.each<[string, (p: Json) => void, string[]]>([
    ["no containers", (p) => (p.spec.containers = []), ["spec.containers: Required value"]],
    ["no image", (p) => delete p.spec.containers[0].image, ["spec.containers[0].image: Required value"]],
    [
      "container name not a DNS label",
      (p) => (p.spec.containers[0].name = "Web_1"),
      [`spec.containers[0].name: Invalid value: "Web_1": ${DNS1123_LABEL}`],
    ],
    [
      "container name with dots",
      (p) => (p.spec.containers[0].name = "web.v1"),
      ['spec.containers[0].name: Invalid value: "web.v1": must not contain dots'],
    ],
    [
      "duplicate container names",
      (p) => p.spec.containers.push({ ...p.spec.containers[0] }),
      ['spec.containers[1].name: Duplicate value: "web"'],
    ],
    [
      "unsupported restart policy",
      (p) => (p.spec.restartPolicy = "Sometimes"),
      [
        'spec.restartPolicy: Unsupported value: "Sometimes": supported values: "Always", "OnFailure", "Never"',
      ],
    ],
    ["restart policy cleared", (p) => (p.spec.restartPolicy = ""), ["spec.restartPolicy: Required value"]],
    [
      "unsupported DNS policy",
      (p) => (p.spec.dnsPolicy = "Google"),
      [
        'spec.dnsPolicy: Unsupported value: "Google": supported values: "ClusterFirstWithHostNet", "ClusterFirst", "Default", "None"',
      ],
    ],
    [
      "grace period removed",
      (p) => delete p.spec.terminationGracePeriodSeconds,
      ["spec.terminationGracePeriodSeconds: Required value"],
    ],
    [
      "ports out of range, missing, duplicate name, bad protocol",
      (p) =>
        (p.spec.containers[0].ports = [
          { name: "http", containerPort: 70000, protocol: "TCP" },
          { name: "http", containerPort: 0, protocol: "TCP" },
          { containerPort: 81, hostPort: -1, protocol: "ICMP" },
        ]),
      [
        "spec.containers[0].ports[0].containerPort: Invalid value: 70000: must be between 1 and 65535, inclusive",
        'spec.containers[0].ports[1].name: Duplicate value: "http"',
        "spec.containers[0].ports[1].containerPort: Required value",
        "spec.containers[0].ports[2].hostPort: Invalid value: -1: must be between 1 and 65535, inclusive",
        'spec.containers[0].ports[2].protocol: Unsupported value: "ICMP": supported values: "SCTP", "TCP", "UDP"',
      ],
    ],
    [
      "port name rules",
      (p) => (p.spec.containers[0].ports = [{ name: "8080", containerPort: 8080, protocol: "TCP" }]),
      ['spec.containers[0].ports[0].name: Invalid value: "8080": must contain at least one letter (a-z)'],
    ],
    [
      "probe with no handler, negative period, liveness successThreshold 2",
      (p) =>
        (p.spec.containers[0].livenessProbe = {
          periodSeconds: -1,
          timeoutSeconds: 1,
          successThreshold: 2,
          failureThreshold: 3,
        }),
      [
        "spec.containers[0].livenessProbe: Required value: must specify a handler type",
        "spec.containers[0].livenessProbe.periodSeconds: Invalid value: -1: must be greater than or equal to 0",
        "spec.containers[0].livenessProbe.successThreshold: Invalid value: 2: must be 1",
      ],
    ],
    [
      "probe with two handlers and a bad HTTP scheme",
      (p) =>
        (p.spec.containers[0].readinessProbe = {
          httpGet: { path: "/", port: 80, scheme: "FTP" },
          tcpSocket: { port: 80 },
          timeoutSeconds: 1,
          periodSeconds: 10,
          successThreshold: 1,
          failureThreshold: 3,
        }),
      [
        'spec.containers[0].readinessProbe.httpGet.scheme: Unsupported value: "FTP": supported values: "HTTP", "HTTPS"',
        "spec.containers[0].readinessProbe.tcpSocket: Forbidden: may not specify more than 1 handler type",
      ],
    ],
    [
      "readiness probe with its own grace period; startup successThreshold",
      (p) => {
        p.spec.containers[0].readinessProbe = {
          exec: { command: ["true"] },
          successThreshold: 1,
          terminationGracePeriodSeconds: 5,
        };
        p.spec.containers[0].startupProbe = { grpc: { port: 0 }, successThreshold: 3 };
      },
      [
        "spec.containers[0].readinessProbe.terminationGracePeriodSeconds: Invalid value: 5: must not be set for readinessProbes",
        "spec.containers[0].startupProbe.grpc.port: Invalid value: 0: must be between 1 and 65535, inclusive",
        "spec.containers[0].startupProbe.successThreshold: Invalid value: 3: must be 1",
      ],
    ],
    [
      "exec probe without a command",
      (p) => (p.spec.containers[0].livenessProbe = { exec: {}, successThreshold: 1 }),
      ["spec.containers[0].livenessProbe.exec.command: Required value"],
    ],
    [
      "image pull policy",
      (p) => (p.spec.containers[0].imagePullPolicy = "Sometimes"),
      [
        'spec.containers[0].imagePullPolicy: Unsupported value: "Sometimes": supported values: "Always", "IfNotPresent", "Never"',
      ],
    ],
    [
      "image with surrounding whitespace (pods only)",
      (p) => (p.spec.containers[0].image = " nginx"),
      ['spec.containers[0].image: Invalid value: " nginx": must not have leading or trailing whitespace'],
    ],
    [
      "env: bad name, two sources, unknown field path",
      (p) =>
        (p.spec.containers[0].env = [
          { name: "1ST", value: "x" },
          {
            name: "B",
            valueFrom: {
              fieldRef: { apiVersion: "v1", fieldPath: "status.phase" },
              secretKeyRef: { name: "s", key: "k" },
            },
          },
          { name: "C", valueFrom: { fieldRef: { apiVersion: "v1", fieldPath: "spec.nothing" } } },
        ]),
      [
        "spec.containers[0].env[0].name: Invalid value: \"1ST\": a valid environment variable name must consist of alphabetic characters, digits, '_', '-', or '.', and must not start with a digit (e.g. 'my.env-name',  or 'MY_ENV.NAME',  or 'MyEnvName1', regex used for validation is '[-._a-zA-Z][-._a-zA-Z0-9]*')",
        'spec.containers[0].env[1].valueFrom.fieldRef.fieldPath: Unsupported value: "status.phase": supported values: "metadata.name", "metadata.namespace", "metadata.uid", "spec.nodeName", "spec.serviceAccountName", "status.hostIP", "status.hostIPs", "status.podIP", "status.podIPs"',
        'spec.containers[0].env[1].valueFrom: Invalid value: "": may not have more than one field specified at a time',
        'spec.containers[0].env[2].valueFrom.fieldRef.fieldPath: Invalid value: "spec.nothing": error converting fieldPath: field label not supported: spec.nothing',
      ],
    ],
    [
      "resources: request above limit, negative, unknown name",
      (p) =>
        (p.spec.containers[0].resources = {
          limits: { cpu: "500m", gpu: "1" },
          requests: { cpu: "1", memory: "-1Mi" },
        }),
      [
        'spec.containers[0].resources.limits[gpu]: Invalid value: "gpu": must be a standard resource type or fully qualified',
        'spec.containers[0].resources.requests: Invalid value: "1": must be less than or equal to cpu limit of 500m',
        'spec.containers[0].resources.requests[memory]: Invalid value: "-1Mi": must be greater than or equal to 0',
      ],
    ],
    [
      "resources: unparseable quantity (upstream: a 400 at decoding, same words)",
      (p) => (p.spec.containers[0].resources = { requests: { memory: "lots" } }),
      [
        "spec.containers[0].resources.requests[memory]: Invalid value: \"lots\": quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
      ],
    ],
    [
      "volumes: unnamed, duplicate, two sources; mounts of unusable volumes, duplicate mount paths",
      (p) => {
        p.spec.volumes = [
          { emptyDir: {} },
          { name: "a", emptyDir: {} },
          { name: "a", emptyDir: {} },
          { name: "b", emptyDir: {}, configMap: { name: "x" } },
          { name: "c", downwardAPI: {}, secret: { secretName: "s" } },
        ];
        p.spec.containers[0].volumeMounts = [
          { name: "b", mountPath: "/b" },
          { name: "a", mountPath: "/b" },
        ];
      },
      [
        "spec.volumes[0].name: Required value",
        'spec.volumes[2].name: Duplicate value: "a"',
        "spec.volumes[3].configMap: Forbidden: may not specify more than 1 volume type",
        // Secret is checked before downwardAPI, and upstream misspells the path it reports.
        "spec.volumes[4].downwarAPI: Forbidden: may not specify more than 1 volume type",
        'spec.containers[0].volumeMounts[0].name: Not found: "b"',
        'spec.containers[0].volumeMounts[1].mountPath: Invalid value: "/b": must be unique',
      ],
    ],
    [
      "tolerations: empty key without Exists, seconds without NoExecute, bad effect",
      (p) =>
        (p.spec.tolerations = [
          { operator: "Equal", value: "x" },
          { key: "k", operator: "Exists", effect: "NoSchedule", tolerationSeconds: 30 },
          { key: "k", operator: "In", effect: "Never" },
        ]),
      [
        'spec.tolerations[0].operator: Invalid value: "Equal": operator must be Exists when `key` is empty, which means "match all values and all keys"',
        "spec.tolerations[1].effect: Invalid value: \"NoSchedule\": effect must be 'NoExecute' when `tolerationSeconds` is set",
        'spec.tolerations[2].operator: Unsupported value: "In": supported values: "Equal", "Exists"',
        'spec.tolerations[2].effect: Unsupported value: "Never": supported values: "NoSchedule", "PreferNoSchedule", "NoExecute"',
      ],
    ],
    [
      "node name, priority class name, service account name",
      (p) => {
        p.spec.nodeName = "Node_1";
        p.spec.priorityClassName = "High";
        p.spec.serviceAccountName = "a/b";
      },
      [
        `spec.serviceAccountName: Invalid value: "a/b": ${DNS1123_SUBDOMAIN}`,
        `spec.nodeName: Invalid value: "Node_1": ${DNS1123_SUBDOMAIN}`,
        `spec.priorityClassName: Invalid value: "High": ${DNS1123_SUBDOMAIN}`,
      ],
    ],
    [
      "affinity: no node selector terms, weight out of range, missing topology key",
      (p) =>
        (p.spec.affinity = {
          nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [] } },
          podAffinity: {
            requiredDuringSchedulingIgnoredDuringExecution: [
              { labelSelector: { matchLabels: { app: "db" } } },
            ],
            preferredDuringSchedulingIgnoredDuringExecution: [
              { weight: 101, podAffinityTerm: { topologyKey: "zone" } },
            ],
          },
        }),
      [
        "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms: Required value: must have at least one node selector term",
        "spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].topologyKey: Required value: can not be empty",
        'spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].topologyKey: Invalid value: "": name part must be non-empty',
        "spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].topologyKey: Invalid value: \"\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
        "spec.affinity.podAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight: Invalid value: 101: must be in the range 1-100",
      ],
    ],
    [
      "preferred node affinity: label values unchecked, a node name in matchFields still checked",
      (p) =>
        (p.spec.affinity = {
          nodeAffinity: {
            preferredDuringSchedulingIgnoredDuringExecution: [
              {
                weight: 10,
                preference: {
                  matchExpressions: [{ key: "zone", operator: "In", values: ["not a label value"] }],
                  matchFields: [{ key: "metadata.name", operator: "In", values: ["Node_1"] }],
                },
              },
            ],
          },
        }),
      [
        `spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].preference.matchFields[0].values[0]: Invalid value: "Node_1": ${DNS1123_SUBDOMAIN}`,
      ],
    ],
    [
      "active deadline out of range",
      (p) => (p.spec.activeDeadlineSeconds = 0),
      ["spec.activeDeadlineSeconds: Invalid value: 0: must be between 1 and 2147483647, inclusive"],
    ],
    [
      "host network with a mismatched host port",
      (p) => {
        p.spec.hostNetwork = true;
        p.spec.containers[0].ports = [{ containerPort: 80, hostPort: 8080, protocol: "TCP" }];
      },
      [
        "spec.containers[0].ports[0].hostPort: Invalid value: 8080: must match `containerPort` when `hostNetwork` is true",
      ],
    ],
    [
      "init container: probes need restartPolicy Always; names unique across init and regular",
      (p) =>
        (p.spec.initContainers = [
          {
            name: "web",
            image: "busybox",
            imagePullPolicy: "IfNotPresent",
            terminationMessagePolicy: "File",
            livenessProbe: { exec: { command: ["true"] } },
          },
        ]),
      [
        'spec.initContainers[0].name: Duplicate value: "web"',
        "spec.initContainers[0].livenessProbe: Forbidden: may not be set for init containers without restartPolicy=Always",
      ],
    ],
    [
      "ephemeral containers on create",
      (p) => (p.spec.ephemeralContainers = [{ name: "debug", image: "busybox" }]),
      ["spec.ephemeralContainers: Forbidden: cannot be set on create"],
    ],
    [
      "metadata: no name, bad namespace",
      (p) => {
        p.metadata.name = "";
        p.metadata.namespace = "Team";
      },
      [
        "metadata.name: Required value: name or generateName is required",
        `metadata.namespace: Invalid value: "Team": ${DNS1123_LABEL}`,
      ],
    ],
  ])("%s", (_name, mutate, expected) => {
    expect(text(validatePod(pod(mutate)))).toEqual(expected);
  });

  it("never throws on a pod of the wrong shape", () => {
    const broken = {
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "x", namespace: "d" },
      spec: { containers: [null, "x"], volumes: {} },
    };
    expect(() => validatePod(broken as KubeObject)).not.toThrow();
    expect(text(validatePod(broken as KubeObject))).toContain("spec.containers[0].name: Required value");
  });
});

describe("validatePodTemplateSpec", () => {
  it("checks template labels and the spec, allowing a template image with whitespace", () => {
    const template = { metadata: { labels: { "bad key": "x" } }, spec: structuredClone(pod().spec) as Json };
    template.spec.containers[0].image = "nginx ";
    expect(text(validatePodTemplateSpec(template, "spec.template"))).toEqual([
      "spec.template.labels: Invalid value: \"bad key\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
    ]);
  });
});
