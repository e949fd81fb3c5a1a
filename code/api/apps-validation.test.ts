import { describe, expect, it } from "vitest";
import {
  validateDeployment,
  validateDeploymentStatusUpdate,
  validateReplicaSet,
  validateReplicaSetStatusUpdate,
  validateScale,
} from "./apps-validation.ts";
import { setDefaults } from "./defaults.ts";
import { aggregateMessage, type FieldError, fieldErrorToString } from "./field-errors.ts";
import type { KubeObject } from "./meta.ts";

// Expected texts follow Kubernetes v1.32's pkg/apis/apps/validation/validation.go. The
// selector/label mismatch is the message kubectl users meet most; upstream prints the labels
// with Go's %#v (`map[string]string{"app":"web"}`).

const text = (errors: FieldError[]): string[] => errors.map(fieldErrorToString);
// biome-ignore lint/suspicious/noExplicitAny: tests build and poke at arbitrary JSON objects
type Json = Record<string, any>;

function deployment(mutate: (d: Json) => void = () => {}): KubeObject {
  const d: Json = {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name: "web", namespace: "default" },
    spec: {
      selector: { matchLabels: { app: "web" } },
      template: {
        metadata: { labels: { app: "web" } },
        spec: { containers: [{ name: "web", image: "nginx" }] },
      },
    },
  };
  setDefaults(d as KubeObject);
  mutate(d);
  return d as KubeObject;
}

describe("Deployment", () => {
  it("accepts a defaulted deployment like `kubectl create deployment web --image=nginx`", () => {
    expect(validateDeployment(deployment())).toEqual([]);
  });

  it.each<[string, (d: Json) => void, string[]]>([
    [
      "selector does not match the template labels",
      (d) => (d.spec.template.metadata.labels = { app: "api", tier: "be" }),
      [
        'spec.template.metadata.labels: Invalid value: map[string]string{"app":"api", "tier":"be"}: `selector` does not match template `labels`',
      ],
    ],
    [
      "template without labels",
      (d) => delete d.spec.template.metadata.labels,
      [
        "spec.template.metadata.labels: Invalid value: map[string]string(nil): `selector` does not match template `labels`",
      ],
    ],
    [
      "no selector",
      (d) => delete d.spec.selector,
      [
        "spec.selector: Required value",
        'spec.template.metadata.labels: Invalid value: map[string]string{"app":"web"}: `selector` does not match template `labels`',
      ],
    ],
    [
      "empty selector",
      (d) => (d.spec.selector = {}),
      [
        "spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string(nil), MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: empty selector is invalid for deployment",
      ],
    ],
    [
      "negative replicas",
      (d) => (d.spec.replicas = -1),
      ["spec.replicas: Invalid value: -1: must be greater than or equal to 0"],
    ],
    [
      "template restart policy other than Always",
      (d) => (d.spec.template.spec.restartPolicy = "OnFailure"),
      ['spec.template.spec.restartPolicy: Unsupported value: "OnFailure": supported values: "Always"'],
    ],
    [
      "rolling update that can never move",
      (d) => (d.spec.strategy.rollingUpdate = { maxUnavailable: 0, maxSurge: "0%" }),
      ["spec.strategy.rollingUpdate.maxUnavailable: Invalid value: 0: may not be 0 when `maxSurge` is 0"],
    ],
    [
      "bad percentages",
      (d) => (d.spec.strategy.rollingUpdate = { maxUnavailable: "150%", maxSurge: "x" }),
      [
        "spec.strategy.rollingUpdate.maxSurge: Invalid value: \"x\": a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')",
        'spec.strategy.rollingUpdate.maxUnavailable: Invalid value: "150%": must not be greater than 100%',
      ],
    ],
    [
      "unknown strategy type",
      (d) => (d.spec.strategy = { type: "BlueGreen" }),
      [
        'spec.strategy: Unsupported value: apps.DeploymentStrategy{Type:"BlueGreen", RollingUpdate:(*apps.RollingUpdateDeployment)(nil)}: supported values: "Recreate", "RollingUpdate"',
      ],
    ],
    [
      "Recreate with rolling-update parameters",
      (d) => (d.spec.strategy.type = "Recreate"),
      ["spec.strategy.rollingUpdate: Forbidden: may not be specified when strategy `type` is 'Recreate'"],
    ],
    [
      "progress deadline not above minReadySeconds",
      (d) => {
        d.spec.minReadySeconds = 600;
      },
      ["spec.progressDeadlineSeconds: Invalid value: 600: must be greater than minReadySeconds"],
    ],
    [
      "errors inside the pod template",
      (d) => (d.spec.template.spec.containers[0].image = ""),
      ["spec.template.spec.containers[0].image: Required value"],
    ],
  ])("%s", (_name, mutate, expected) => {
    expect(text(validateDeployment(deployment(mutate)))).toEqual(expected);
  });

  it('aggregates into the message kubectl prints after `The Deployment "web" is invalid: `', () => {
    const errors = validateDeployment(
      deployment((d) => (d.spec.template.metadata.labels = { app: "nginx" })),
    );
    expect(aggregateMessage(errors)).toBe(
      'spec.template.metadata.labels: Invalid value: map[string]string{"app":"nginx"}: `selector` does not match template `labels`',
    );
  });

  it("status counts are nested and collisionCount never goes down", () => {
    const old = deployment((d) => {
      d.metadata.resourceVersion = "1";
      d.status = { replicas: 3, readyReplicas: 3, availableReplicas: 3, collisionCount: 2 };
    });
    const updated = structuredClone(old) as Json;
    updated.status = { replicas: 2, readyReplicas: 3, availableReplicas: 1, collisionCount: 1 };
    expect(text(validateDeploymentStatusUpdate(updated as KubeObject, old))).toEqual([
      "status.readyReplicas: Invalid value: 3: cannot be greater than status.replicas",
      "status.collisionCount: Invalid value: 1: cannot be decremented",
    ]);
  });
});

describe("ReplicaSet and Scale", () => {
  const replicaSet = (mutate: (r: Json) => void = () => {}): KubeObject => {
    const r: Json = {
      apiVersion: "apps/v1",
      kind: "ReplicaSet",
      metadata: { name: "web-5d4f", namespace: "default" },
      spec: {
        selector: { matchExpressions: [{ key: "app", operator: "In", values: ["web"] }] },
        template: {
          metadata: { labels: { app: "web" } },
          spec: { containers: [{ name: "web", image: "nginx" }] },
        },
      },
    };
    setDefaults(r as KubeObject);
    mutate(r);
    return r as KubeObject;
  };

  it("validates like a deployment without a strategy", () => {
    expect(validateReplicaSet(replicaSet())).toEqual([]);
    expect(text(validateReplicaSet(replicaSet((r) => (r.spec.template.metadata.labels.app = "db"))))).toEqual(
      [
        'spec.template.metadata.labels: Invalid value: map[string]string{"app":"db"}: `selector` does not match template `labels`',
      ],
    );
    expect(
      text(validateReplicaSet(replicaSet((r) => (r.spec.template.spec.activeDeadlineSeconds = 5)))),
    ).toEqual([
      "spec.template.spec.activeDeadlineSeconds: Forbidden: activeDeadlineSeconds in ReplicaSet is not Supported",
    ]);
    expect(
      text(validateReplicaSet(replicaSet((r) => (r.spec.selector.matchExpressions[0].operator = "Like")))),
    ).toEqual([
      'spec.selector.matchExpressions[0].operator: Invalid value: "Like": not a valid selector operator',
      'spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string(nil), MatchExpressions:[]v1.LabelSelectorRequirement{v1.LabelSelectorRequirement{Key:"app", Operator:"Like", Values:[]string{"web"}}}}: invalid label selector',
    ]);
  });

  it("status: available cannot exceed ready", () => {
    const old = replicaSet((r) => (r.metadata.resourceVersion = "1"));
    const updated = structuredClone(old) as Json;
    updated.status = { replicas: 3, readyReplicas: 1, availableReplicas: 2 };
    expect(text(validateReplicaSetStatusUpdate(updated as KubeObject, old))).toEqual([
      "status.availableReplicas: Invalid value: 2: cannot be greater than readyReplicas",
    ]);
  });

  it("a Scale may not be negative", () => {
    const scale = (replicas: number): KubeObject => ({
      apiVersion: "autoscaling/v1",
      kind: "Scale",
      metadata: { name: "web", namespace: "default" },
      spec: { replicas },
    });
    expect(validateScale(scale(0))).toEqual([]);
    expect(text(validateScale(scale(-2)))).toEqual([
      "spec.replicas: Invalid value: -2: must be greater than or equal to 0",
    ]);
  });
});
