import { describe, expect, it } from "vitest";
import { setDefaults } from "./defaults.ts";
import { type FieldError, fieldErrorToString } from "./field-errors.ts";
import type { KubeObject } from "./meta.ts";
import {
  UPDATABLE_POD_SPEC_FIELDS,
  validatePodBinding,
  validatePodStatusUpdate,
  validatePodUpdate,
} from "./pod-update-validation.ts";

// Expected messages are Kubernetes v1.32's (pkg/apis/core/validation/validation.go:
// ValidatePodUpdate, updatablePodSpecFields, ValidatePodStatusUpdate, ValidatePodBinding).

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

describe("validatePodUpdate", () => {
  const old = pod((p) => {
    p.spec.tolerations = [{ key: "a", operator: "Exists", effect: "NoExecute", tolerationSeconds: 60 }];
    p.spec.activeDeadlineSeconds = 100;
  });

  it("allows the updatable fields", () => {
    const updated = structuredClone(old) as Json;
    updated.spec.containers[0].image = "nginx:1.28";
    updated.spec.activeDeadlineSeconds = 50;
    updated.spec.tolerations[0].tolerationSeconds = 30;
    updated.spec.tolerations.push({ key: "b", operator: "Exists" });
    updated.metadata.labels = { tier: "fe" };
    expect(validatePodUpdate(updated as KubeObject, old)).toEqual([]);
  });

  it("refuses any other spec change with upstream's message and a diff", () => {
    const updated = structuredClone(old) as Json;
    updated.spec.restartPolicy = "Never";
    const errors = validatePodUpdate(updated as KubeObject, old);
    expect(errors).toHaveLength(1);
    const message = fieldErrorToString(errors[0]);
    const [first, ...diff] = message.split("\n");
    expect(first).toBe(
      "spec: Forbidden: pod updates may not change fields other than `spec.containers[*].image`," +
        "`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing " +
        "tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)",
    );
    expect(UPDATABLE_POD_SPEC_FIELDS).toHaveLength(5);
    expect(diff.join("\n")).toContain('- \trestartPolicy: "Always",');
    expect(diff.join("\n")).toContain('+ \trestartPolicy: "Never",');
    expect(diff.join("\n")).not.toContain("containers");
  });

  it.each<[string, (p: Json) => void, string[]]>([
    [
      "adding a container",
      (p) => p.spec.containers.push({ ...p.spec.containers[0], name: "b" }),
      ["spec.containers: Forbidden: pod updates may not add or remove containers"],
    ],
    [
      "raising the active deadline",
      (p) => (p.spec.activeDeadlineSeconds = 200),
      ["spec.activeDeadlineSeconds: Invalid value: 200: must be less than or equal to previous value"],
    ],
    [
      "removing the active deadline",
      (p) => delete p.spec.activeDeadlineSeconds,
      [
        "spec.activeDeadlineSeconds: Invalid value: null: must not update from a positive integer to nil value",
      ],
    ],
    [
      "changing an existing toleration",
      (p) => (p.spec.tolerations[0].key = "c"),
      ["spec.tolerations: Forbidden: existing toleration can not be modified except its tolerationSeconds"],
    ],
    [
      "changing the uid and dropping the resourceVersion",
      (p) => {
        p.metadata.uid = "u-2";
        delete p.metadata.resourceVersion;
      },
      [
        'metadata.resourceVersion: Invalid value: "": must be specified for an update',
        'metadata.uid: Invalid value: "u-2": field is immutable',
      ],
    ],
  ])("%s", (_name, mutate, expected) => {
    const updated = structuredClone(old) as Json;
    mutate(updated);
    expect(text(validatePodUpdate(updated as KubeObject, old))).toEqual(expected);
  });

  it("lets scheduling gates be removed, never added", () => {
    const gated = pod((p) => (p.spec.schedulingGates = [{ name: "g1" }]));
    const added = structuredClone(gated) as Json;
    added.spec.schedulingGates.push({ name: "g2" });
    expect(text(validatePodUpdate(added as KubeObject, gated))).toEqual([
      "spec.schedulingGates[1].name: Forbidden: only deletion is allowed, but found new scheduling gate 'g2'",
    ]);
    const removed = structuredClone(gated) as Json;
    delete removed.spec.schedulingGates;
    expect(validatePodUpdate(removed as KubeObject, gated)).toEqual([]);
  });

  it("allows a negative grace period to become 1, and nothing else", () => {
    const negative = pod((p) => (p.spec.terminationGracePeriodSeconds = -1));
    const toOne = structuredClone(negative) as Json;
    toOne.spec.terminationGracePeriodSeconds = 1;
    expect(validatePodUpdate(toOne as KubeObject, negative)).toEqual([]);
    const toTwo = structuredClone(negative) as Json;
    toTwo.spec.terminationGracePeriodSeconds = 2;
    expect(text(validatePodUpdate(toTwo as KubeObject, negative))[0]).toMatch(
      /^spec: Forbidden: pod updates may not change/,
    );
  });
});

describe("validatePodStatusUpdate and validatePodBinding", () => {
  const scheduled = pod((p) => {
    p.spec.nodeName = "node-1";
    p.spec.restartPolicy = "Never";
    p.status = {
      phase: "Running",
      qosClass: "BestEffort",
      containerStatuses: [
        {
          name: "web",
          state: { terminated: { exitCode: 0 } },
          ready: false,
          restartCount: 0,
          image: "",
          imageID: "",
        },
      ],
    };
  });

  it("accepts a kubelet status write and refuses moving the pod or reviving a terminated container", () => {
    const ok = structuredClone(scheduled) as Json;
    ok.status.phase = "Succeeded";
    ok.status.podIP = "10.0.0.5";
    ok.status.podIPs = [{ ip: "10.0.0.5" }];
    expect(validatePodStatusUpdate(ok as KubeObject, scheduled)).toEqual([]);

    const bad = structuredClone(scheduled) as Json;
    bad.spec.nodeName = "node-2";
    bad.status.qosClass = "Burstable";
    bad.status.containerStatuses[0].state = { running: {} };
    bad.status.podIPs = [{ ip: "10.0.0.300" }];
    expect(text(validatePodStatusUpdate(bad as KubeObject, scheduled))).toEqual([
      "status.nodeName: Forbidden: may not be changed directly",
      'status.qosClass: Invalid value: "Burstable": field is immutable',
      "status.containerStatuses[0].state: Forbidden: may not be transitioned to non-terminated state",
      'status.podIPs[0]: Invalid value: "10.0.0.300": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)',
    ]);
  });

  it("binds only to a named Node", () => {
    const binding = (target: object): KubeObject => ({
      apiVersion: "v1",
      kind: "Binding",
      metadata: { name: "web" },
      target,
    });
    expect(validatePodBinding(binding({ kind: "Node", name: "node-1" }))).toEqual([]);
    expect(validatePodBinding(binding({ name: "node-1" }))).toEqual([]);
    expect(text(validatePodBinding(binding({ kind: "Pod" })))).toEqual([
      'target.kind: Unsupported value: "Pod": supported values: "Node", "<empty>"',
      "target.name: Required value",
    ]);
  });
});
