import { describe, expect, it } from "vitest";
import { validateLease, validateLeaseUpdate } from "./coordination-validation.ts";
import { fieldErrorToString } from "./field-errors.ts";
import type { KubeObject } from "./meta.ts";

// Expected texts follow Kubernetes v1.32's pkg/apis/coordination/validation/validation.go.

const lease = (spec: Record<string, unknown>, meta: Record<string, unknown> = {}): KubeObject => ({
  apiVersion: "coordination.k8s.io/v1",
  kind: "Lease",
  metadata: { name: "kube-scheduler", namespace: "kube-system", ...meta },
  spec,
});

describe("Lease", () => {
  it("accepts a leader-election lease and a node lease", () => {
    expect(
      validateLease(
        lease({
          holderIdentity: "node-1_0a1b",
          leaseDurationSeconds: 15,
          acquireTime: "2024-01-02T03:04:05.000000Z",
          renewTime: "2024-01-02T03:04:15.123456Z",
          leaseTransitions: 0,
        }),
      ),
    ).toEqual([]);
    expect(
      validateLease(
        lease(
          { holderIdentity: "node-1", leaseDurationSeconds: 40 },
          { namespace: "kube-node-lease", name: "node-1" },
        ),
      ),
    ).toEqual([]);
  });

  it("durations must be positive, transitions non-negative", () => {
    expect(
      validateLease(lease({ leaseDurationSeconds: 0, leaseTransitions: -1 })).map(fieldErrorToString),
    ).toEqual([
      "spec.leaseDurationSeconds: Invalid value: 0: must be greater than 0",
      "spec.leaseTransitions: Invalid value: -1: must be greater than or equal to 0",
    ]);
  });

  it("leases skip core's finalizer-name rule but keep the metadata update rules", () => {
    expect(validateLease(lease({}, { finalizers: ["cleanup"] }))).toEqual([]);
    const old = lease({ holderIdentity: "a" }, { resourceVersion: "4" });
    const renewed = lease(
      { holderIdentity: "b", renewTime: "2024-01-02T03:04:15.000000Z" },
      { resourceVersion: "4" },
    );
    expect(validateLeaseUpdate(renewed, old)).toEqual([]);
    expect(
      validateLeaseUpdate(lease({}, { resourceVersion: "4", name: "other" }), old).map(fieldErrorToString),
    ).toEqual(['metadata.name: Invalid value: "other": field is immutable']);
  });
});
