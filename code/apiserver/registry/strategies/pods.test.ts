import { beforeEach, describe, expect, it, vi } from "vitest";
import type { Pod } from "../../../api/core.ts";
import type { KubeObject } from "../../../api/meta.ts";

// The strategy's own logic is tested here; the validation rules are code/api/validation.ts's.
const validation = vi.hoisted(() => ({
  validateCreate: vi.fn(() => []),
  validateUpdate: vi.fn(() => []),
  validateStatusUpdate: vi.fn(() => []),
}));
vi.mock("./validation.ts", () => validation);

const { podStrategy, checkGracefulDelete } = await import("./pods.ts");
const { computePodQOS, quantityNanos } = await import("./pod-qos.ts");

function pod(spec: Partial<Pod["spec"]> = {}, extra: Partial<Pod> = {}): Pod {
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name: "web", namespace: "default", labels: { app: "web" } },
    spec: { containers: [{ name: "c", image: "nginx" }], ...spec },
    ...extra,
  };
}

const res = (requests?: Record<string, string>, limits?: Record<string, string>) => ({
  name: "c",
  image: "nginx",
  resources: { requests, limits },
});

describe("pod prepareForCreate", () => {
  it("replaces whatever status the client sent with Pending and the computed QoS class", () => {
    const p = pod(
      {},
      { status: { phase: "Running", podIP: "10.0.0.1", conditions: [{ type: "Ready", status: "True" }] } },
    );
    podStrategy.prepareForCreate(p);
    expect(p.status).toEqual({ phase: "Pending", qosClass: "BestEffort" });
  });

  it("keeps a QoS class the client sent, as upstream's GetPodQOS does", () => {
    const p = pod({}, { status: { phase: "Running", qosClass: "Guaranteed" } });
    podStrategy.prepareForCreate(p);
    expect(p.status).toEqual({ phase: "Pending", qosClass: "Guaranteed" });
  });

  it("marks a pod with scheduling gates PodScheduled=False/SchedulingGated", () => {
    const p = pod({ schedulingGates: [{ name: "example.com/wait" }] } as Partial<Pod["spec"]>);
    podStrategy.prepareForCreate(p);
    expect(p.status?.conditions).toEqual([
      {
        type: "PodScheduled",
        status: "False",
        reason: "SchedulingGated",
        message: "Scheduling is blocked due to non-empty scheduling gates",
      },
    ]);
  });

  it("adds no condition without gates", () => {
    const p = pod();
    podStrategy.prepareForCreate(p);
    expect(p.status?.conditions).toBeUndefined();
  });

  it("turns matchLabelKeys and mismatchLabelKeys into In / NotIn expressions with the pod's values", () => {
    const term = {
      topologyKey: "kubernetes.io/hostname",
      labelSelector: { matchLabels: { app: "web" } },
      matchLabelKeys: ["pod-template-hash", "absent"],
      mismatchLabelKeys: ["tenant"],
    };
    const nilSelector = { topologyKey: "zone", matchLabelKeys: ["tenant"] };
    const p = pod({
      affinity: {
        podAntiAffinity: {
          requiredDuringSchedulingIgnoredDuringExecution: [term, nilSelector],
          preferredDuringSchedulingIgnoredDuringExecution: [
            {
              weight: 1,
              podAffinityTerm: {
                topologyKey: "zone",
                labelSelector: {},
                matchLabelKeys: ["tenant"],
              } as never,
            },
          ],
        },
      },
    });
    p.metadata.labels = { app: "web", "pod-template-hash": "abc", tenant: "t1" };
    podStrategy.prepareForCreate(p);
    const required = p.spec.affinity?.podAntiAffinity?.requiredDuringSchedulingIgnoredDuringExecution ?? [];
    expect(required[0].labelSelector?.matchExpressions).toEqual([
      { key: "pod-template-hash", operator: "In", values: ["abc"] },
      { key: "tenant", operator: "NotIn", values: ["t1"] },
    ]);
    // A nil selector matches nothing and must stay nil.
    expect(required[1].labelSelector).toBeUndefined();
    const preferred = p.spec.affinity?.podAntiAffinity?.preferredDuringSchedulingIgnoredDuringExecution ?? [];
    expect(preferred[0].podAffinityTerm.labelSelector?.matchExpressions).toEqual([
      { key: "tenant", operator: "In", values: ["t1"] },
    ]);
  });
});

describe("pod prepareForUpdate and the status subresource", () => {
  let old: Pod;
  beforeEach(() => {
    old = pod({ nodeName: "n1" }, { status: { phase: "Running", podIP: "10.0.0.7", qosClass: "Burstable" } });
    old.metadata.ownerReferences = [{ apiVersion: "apps/v1", kind: "ReplicaSet", name: "rs", uid: "u1" }];
  });

  it("a write to the pod keeps the stored status", () => {
    const next = pod({ nodeName: "n1", activeDeadlineSeconds: 5 }, { status: { phase: "Failed" } });
    podStrategy.prepareForUpdate(next, old);
    expect(next.status).toEqual(old.status);
    expect(next.spec.activeDeadlineSeconds).toBe(5);
  });

  it("a write that drops the status still keeps it", () => {
    const next = pod({ nodeName: "n1" });
    podStrategy.prepareForUpdate(next, old);
    expect(next.status?.phase).toBe("Running");
  });

  it("a status write keeps spec, ownerReferences and deletionTimestamp, and back-fills qosClass", () => {
    const status = podStrategy.status;
    expect(status).toBeDefined();
    old.metadata.deletionTimestamp = "2024-01-01T00:00:00Z";
    const next = pod({ nodeName: "elsewhere" }, { status: { phase: "Succeeded" } });
    next.metadata.ownerReferences = [];
    status?.prepareForUpdate(next, old);
    expect(next.spec).toEqual(old.spec);
    expect(next.metadata.ownerReferences).toEqual(old.metadata.ownerReferences);
    expect(next.metadata.deletionTimestamp).toBe("2024-01-01T00:00:00Z");
    expect(next.status).toEqual({ phase: "Succeeded", qosClass: "Burstable" });
  });

  it("a status write cannot set a deletionTimestamp the pod does not have", () => {
    const next = pod({ nodeName: "n1" }, { status: { phase: "Running" } });
    next.metadata.deletionTimestamp = "2030-01-01T00:00:00Z";
    podStrategy.status?.prepareForUpdate(next, old);
    expect(next.metadata.deletionTimestamp).toBeUndefined();
  });

  it("the status strategy inherits the main strategy's update policy and validates with the status rules", () => {
    expect(podStrategy.status?.allowUnconditionalUpdate).toBe(true);
    expect(podStrategy.status?.allowCreateOnUpdate).toBe(false);
    podStrategy.status?.validateUpdate(old, old);
    expect(validation.validateStatusUpdate).toHaveBeenCalled();
  });

  it("validate delegates to the kind's rules", () => {
    const p = pod();
    podStrategy.validate(p);
    expect(validation.validateCreate).toHaveBeenCalledWith(p);
  });
});

describe("pod checkGracefulDelete", () => {
  const bound = (extra: Partial<Pod> = {}) =>
    pod({ nodeName: "n1", terminationGracePeriodSeconds: 45 }, extra);

  it("uses the requested period for a pod on a node", () => {
    const options = { gracePeriodSeconds: 10 };
    expect(checkGracefulDelete(bound(), options)).toBe(true);
    expect(options.gracePeriodSeconds).toBe(10);
  });

  it("falls back to terminationGracePeriodSeconds", () => {
    const options: { gracePeriodSeconds?: number } = {};
    checkGracefulDelete(bound(), options);
    expect(options.gracePeriodSeconds).toBe(45);
  });

  it("deletes an unscheduled pod at once", () => {
    const options = { gracePeriodSeconds: 30 };
    checkGracefulDelete(pod({ terminationGracePeriodSeconds: 45 }), options);
    expect(options.gracePeriodSeconds).toBe(0);
  });

  it("deletes a finished pod at once", () => {
    for (const phase of ["Succeeded", "Failed"] as const) {
      const options: { gracePeriodSeconds?: number } = {};
      checkGracefulDelete(bound({ status: { phase } }), options);
      expect(options.gracePeriodSeconds).toBe(0);
    }
  });

  it("turns a negative period into 1s", () => {
    const options = { gracePeriodSeconds: -5 };
    checkGracefulDelete(bound(), options);
    expect(options.gracePeriodSeconds).toBe(1);
  });
});

describe("pod selectable fields", () => {
  it("offers upstream's fields with the pod's values", () => {
    const p = pod(
      {
        nodeName: "n1",
        restartPolicy: "Always",
        schedulerName: "default-scheduler",
        serviceAccountName: "sa",
      },
      {
        status: {
          phase: "Running",
          podIPs: [{ ip: "10.0.0.9" }],
          podIP: "10.0.0.9",
          nominatedNodeName: "n2",
        },
      },
    );
    expect(podStrategy.selectableFields(p)).toEqual({
      "metadata.name": "web",
      "metadata.namespace": "default",
      "spec.nodeName": "n1",
      "spec.restartPolicy": "Always",
      "spec.schedulerName": "default-scheduler",
      "spec.serviceAccountName": "sa",
      "spec.hostNetwork": "false",
      "status.phase": "Running",
      "status.podIP": "10.0.0.9",
      "status.nominatedNodeName": "n2",
    });
  });

  it("reads absent fields as empty strings, for an empty object too", () => {
    const fields = podStrategy.selectableFields({ metadata: {} } as KubeObject);
    expect(fields["spec.nodeName"]).toBe("");
    expect(fields["status.phase"]).toBe("");
    expect(fields["spec.hostNetwork"]).toBe("false");
  });
});

describe("pod QoS class", () => {
  const qos = (...containers: ReturnType<typeof res>[]) => computePodQOS(pod({ containers }));

  it("BestEffort without any cpu or memory request or limit", () => {
    expect(qos(res())).toBe("BestEffort");
    expect(qos(res({ cpu: "0", memory: "0" }))).toBe("BestEffort");
    expect(qos(res({ "nvidia.com/gpu": "1" }, { "nvidia.com/gpu": "1" }))).toBe("BestEffort");
  });

  it("Guaranteed when every container's requests equal its limits for cpu and memory", () => {
    const full = res({ cpu: "100m", memory: "100Mi" }, { cpu: "100m", memory: "100Mi" });
    expect(qos(full, full)).toBe("Guaranteed");
    // Values, not spellings: 0.1 cpu is 100m, 104857600 bytes is 100Mi.
    expect(qos(res({ cpu: "0.1", memory: "104857600" }, { cpu: "100m", memory: "100Mi" }))).toBe(
      "Guaranteed",
    );
  });

  it("Burstable when requests differ from limits, a limit is missing, or only requests are set", () => {
    expect(qos(res({ cpu: "100m", memory: "100Mi" }, { cpu: "200m", memory: "100Mi" }))).toBe("Burstable");
    expect(qos(res({ cpu: "100m" }, { cpu: "100m" }))).toBe("Burstable");
    expect(qos(res({ memory: "1Gi" }))).toBe("Burstable");
    const full = res({ cpu: "1", memory: "1Gi" }, { cpu: "1", memory: "1Gi" });
    expect(qos(full, res())).toBe("Burstable");
  });

  it("counts init containers", () => {
    const full = res({ cpu: "1", memory: "1Gi" }, { cpu: "1", memory: "1Gi" });
    const p = pod({ containers: [full], initContainers: [res({ cpu: "1" })] });
    expect(computePodQOS(p)).toBe("Burstable");
  });

  it("parses quantities exactly", () => {
    expect(quantityNanos("500m")).toBe(500_000_000n);
    expect(quantityNanos("1Ki")).toBe(1024n * 1_000_000_000n);
    expect(quantityNanos("1e3")).toBe(quantityNanos("1k"));
    expect(quantityNanos("0.5")).toBe(quantityNanos("500m"));
    expect(quantityNanos("1.5Gi")).toBe(1536n * 1024n * 1024n * 1_000_000_000n);
    expect(quantityNanos("12abc")).toBeUndefined();
  });
});
