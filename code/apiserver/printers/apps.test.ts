import { describe, expect, it } from "vitest";
import type { Deployment, ReplicaSet } from "../../api/apps.ts";
import type { KubeObject } from "../../api/meta.ts";
import { convertToTable } from "./printers.ts";

// Expected cells follow upstream's printDeployment, printReplicaSet, printLease and
// printPriorityClass, and the cases of printers_test.go (TestPrintDeployment, TestPrintReplicaSet, …).
const now = new Date("2024-05-01T12:00:00Z");
const ago = (seconds: number) => new Date(now.getTime() - seconds * 1000).toISOString();
const columns = (group: string, resource: string) =>
  convertToTable(group, resource, [], now).columnDefinitions.map((c) => (c.priority ? `${c.name}*` : c.name));
const template = {
  spec: {
    containers: [
      { name: "fake-container1", image: "fake-image1" },
      { name: "fake-container2", image: "fake-image2" },
    ],
  },
};

describe("deployment table", () => {
  it("READY is ready/desired; wide adds containers, images and the selector", () => {
    const d: Deployment = {
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: { name: "test1", creationTimestamp: ago(10 * 365 * 86400) },
      spec: { replicas: 5, selector: { matchLabels: { foo: "bar" } }, template },
      status: {
        replicas: 10,
        updatedReplicas: 2,
        availableReplicas: 1,
        unavailableReplicas: 4,
        readyReplicas: 1,
      },
    };
    expect(columns("apps", "deployments")).toEqual([
      "Name",
      "Ready",
      "Up-to-date",
      "Available",
      "Age",
      "Containers*",
      "Images*",
      "Selector*",
    ]);
    expect(convertToTable("apps", "deployments", [d], now).rows[0].cells).toEqual([
      "test1",
      "1/5",
      2,
      1,
      "10y",
      "fake-container1,fake-container2",
      "fake-image1,fake-image2",
      "foo=bar",
    ]);
  });

  it("a new deployment without status reads 0/N; an invalid selector prints <invalid>", () => {
    const d = {
      metadata: { name: "d" },
      spec: { replicas: 3, selector: { matchExpressions: [{ key: "a", operator: "In" }] }, template },
    } as unknown as KubeObject;
    const cells = convertToTable("apps", "deployments", [d], now).rows[0].cells;
    expect(cells.slice(1, 4)).toEqual(["0/3", 0, 0]);
    expect(cells[7]).toBe("<invalid>");
  });
});

describe("replicaset table", () => {
  it("DESIRED CURRENT READY as integers; wide selector via FormatLabelSelector", () => {
    const rs: ReplicaSet = {
      apiVersion: "apps/v1",
      kind: "ReplicaSet",
      metadata: { name: "web-7d4b9c", creationTimestamp: ago(7200) },
      spec: {
        replicas: 5,
        selector: {
          matchLabels: { app: "web" },
          matchExpressions: [{ key: "tier", operator: "In", values: ["be", "fe"] }],
        },
        template,
      },
      status: { replicas: 5, readyReplicas: 2 },
    };
    expect(columns("apps", "replicasets")).toEqual([
      "Name",
      "Desired",
      "Current",
      "Ready",
      "Age",
      "Containers*",
      "Images*",
      "Selector*",
    ]);
    expect(convertToTable("apps", "replicasets", [rs], now).rows[0].cells).toEqual([
      "web-7d4b9c",
      5,
      5,
      2,
      "120m",
      "fake-container1,fake-container2",
      "fake-image1,fake-image2",
      "app=web,tier in (be,fe)",
    ]);
    const empty = { ...rs, spec: { ...rs.spec, selector: {} } };
    expect(convertToTable("apps", "replicasets", [empty], now).rows[0].cells[7]).toBe("<none>");
  });
});

describe("lease and priorityclass tables", () => {
  it("lease: NAME HOLDER AGE", () => {
    expect(columns("coordination.k8s.io", "leases")).toEqual(["Name", "Holder", "Age"]);
    const lease = {
      metadata: { name: "kube-scheduler", creationTimestamp: ago(30) },
      spec: { holderIdentity: "host_1234" },
    };
    expect(convertToTable("coordination.k8s.io", "leases", [lease], now).rows[0].cells).toEqual([
      "kube-scheduler",
      "host_1234",
      "30s",
    ]);
    expect(
      convertToTable("coordination.k8s.io", "leases", [{ metadata: { name: "free" } }], now).rows[0].cells[1],
    ).toBe("");
  });

  it("priorityclass: NAME VALUE GLOBAL-DEFAULT AGE PREEMPTIONPOLICY", () => {
    expect(columns("scheduling.k8s.io", "priorityclasses")).toEqual([
      "Name",
      "Value",
      "Global-Default",
      "Age",
      "PreemptionPolicy",
    ]);
    const pc = {
      metadata: { name: "system-node-critical", creationTimestamp: ago(86400) },
      value: 2000001000,
      globalDefault: false,
      preemptionPolicy: "PreemptLowerPriority",
    };
    expect(convertToTable("scheduling.k8s.io", "priorityclasses", [pc], now).rows[0].cells).toEqual([
      "system-node-critical",
      2000001000,
      false,
      "24h",
      "PreemptLowerPriority",
    ]);
    const types = convertToTable("scheduling.k8s.io", "priorityclasses", [], now).columnDefinitions.map(
      (c) => c.type,
    );
    expect(types).toEqual(["string", "integer", "boolean", "string", "string"]);
  });
});
