import { describe, expect, it } from "vitest";
import type { Endpoints, Event, Node, Service } from "../../api/core.ts";
import type { KubeObject } from "../../api/meta.ts";
import { convertToTable } from "./printers.ts";

// Expected cells follow upstream's printers.go and the cases of printers_test.go
// (TestPrintNodeStatus, TestPrintNodeRole, TestPrintService, TestPrintEndpoint, TestPrintEvent, …).
const now = new Date("2024-05-01T12:00:00Z");
const ago = (seconds: number) => new Date(now.getTime() - seconds * 1000).toISOString();
const row = (group: string, resource: string, obj: KubeObject) =>
  convertToTable(group, resource, [obj], now).rows[0].cells;
const columns = (group: string, resource: string) =>
  convertToTable(group, resource, [], now).columnDefinitions.map((c) => (c.priority ? `${c.name}*` : c.name));

describe("node table", () => {
  const node = (n: Partial<Node>): Node => ({
    apiVersion: "v1",
    kind: "Node",
    metadata: { name: "n1" },
    ...n,
  });

  it("has upstream's columns", () => {
    expect(columns("", "nodes")).toEqual([
      "Name",
      "Status",
      "Roles",
      "Age",
      "Version",
      "Internal-IP*",
      "External-IP*",
      "OS-Image*",
      "Kernel-Version*",
      "Container-Runtime*",
    ]);
  });

  it("status is Ready / NotReady / Unknown, plus SchedulingDisabled when cordoned", () => {
    const ready = { conditions: [{ type: "Ready", status: "True" as const }] };
    expect(row("", "nodes", node({ status: ready }))[1]).toBe("Ready");
    expect(row("", "nodes", node({ status: ready, spec: { unschedulable: true } }))[1]).toBe(
      "Ready,SchedulingDisabled",
    );
    expect(row("", "nodes", node({ status: { conditions: [{ type: "Ready", status: "False" }] } }))[1]).toBe(
      "NotReady",
    );
    expect(
      row("", "nodes", node({ status: { conditions: [{ type: "Ready", status: "Unknown" }] } }))[1],
    ).toBe("NotReady");
    expect(row("", "nodes", node({ spec: { unschedulable: true } }))[1]).toBe("Unknown,SchedulingDisabled");
    const pressureOnly = { conditions: [{ type: "MemoryPressure", status: "True" as const }] };
    expect(row("", "nodes", node({ status: pressureOnly }))[1]).toBe("Unknown");
  });

  it("roles come from node-role.kubernetes.io/<role> and kubernetes.io/role labels, sorted", () => {
    const withLabels = (labels: Record<string, string>) =>
      row("", "nodes", node({ metadata: { name: "n", labels } }))[2];
    expect(
      withLabels({ "node-role.kubernetes.io/worker": "", "node-role.kubernetes.io/control-plane": "" }),
    ).toBe("control-plane,worker");
    expect(withLabels({ "kubernetes.io/role": "node", "node-role.kubernetes.io/node": "true" })).toBe("node");
    expect(withLabels({ "node-role.kubernetes.io/": "x", "kubernetes.io/role": "" })).toBe("<none>");
  });

  it("fills version, addresses and system info, with <none>/<unknown> when missing", () => {
    const n = node({
      metadata: { name: "n1", creationTimestamp: ago(3 * 86400 + 5 * 3600) },
      status: {
        conditions: [{ type: "Ready", status: "True" }],
        addresses: [
          { type: "Hostname", address: "n1" },
          { type: "InternalIP", address: "192.168.0.10" },
        ],
        nodeInfo: {
          kubeletVersion: "v1.32.0",
          osImage: "Debian GNU/Linux 12 (bookworm)",
          kernelVersion: "6.1.0",
          containerRuntimeVersion: "",
        } as never,
      },
    });
    expect(row("", "nodes", n)).toEqual([
      "n1",
      "Ready",
      "<none>",
      "3d5h",
      "v1.32.0",
      "192.168.0.10",
      "<none>",
      "Debian GNU/Linux 12 (bookworm)",
      "6.1.0",
      "<unknown>",
    ]);
  });
});

describe("namespace, configmap, secret, serviceaccount tables", () => {
  it("print their counts and phases", () => {
    expect(columns("", "namespaces")).toEqual(["Name", "Status", "Age"]);
    expect(
      row("", "namespaces", {
        metadata: { name: "default", creationTimestamp: ago(45) },
        status: { phase: "Active" },
      }),
    ).toEqual(["default", "Active", "45s"]);
    expect(columns("", "configmaps")).toEqual(["Name", "Data", "Age"]);
    expect(
      row("", "configmaps", {
        metadata: { name: "cm" },
        data: { a: "1", b: "2" },
        binaryData: { c: "AA==" },
      }),
    ).toEqual(["cm", 3, "<unknown>"]);
    expect(columns("", "secrets")).toEqual(["Name", "Type", "Data", "Age"]);
    expect(row("", "secrets", { metadata: { name: "s" }, type: "Opaque", data: { k: "dg==" } })).toEqual([
      "s",
      "Opaque",
      1,
      "<unknown>",
    ]);
    expect(columns("", "serviceaccounts")).toEqual(["Name", "Secrets", "Age"]);
    expect(row("", "serviceaccounts", { metadata: { name: "default" } })).toEqual([
      "default",
      0,
      "<unknown>",
    ]);
  });
});

describe("service table", () => {
  const svc = (spec: Service["spec"], status?: Service["status"]): Service => ({
    apiVersion: "v1",
    kind: "Service",
    metadata: { name: "web", creationTimestamp: ago(600) },
    spec,
    status,
  });

  it("has upstream's columns", () => {
    expect(columns("", "services")).toEqual([
      "Name",
      "Type",
      "Cluster-IP",
      "External-IP",
      "Port(s)",
      "Age",
      "Selector*",
    ]);
  });

  it("ClusterIP and NodePort services", () => {
    expect(
      row(
        "",
        "services",
        svc({
          type: "ClusterIP",
          clusterIPs: ["10.9.8.7"],
          ports: [{ protocol: "TCP", port: 2233 }],
          selector: { foo: "bar" },
        }),
      ),
    ).toEqual(["web", "ClusterIP", "10.9.8.7", "<none>", "2233/TCP", "10m", "foo=bar"]);
    expect(
      row(
        "",
        "services",
        svc({
          type: "NodePort",
          clusterIP: "10.9.8.7",
          ports: [
            { protocol: "TCP", port: 8888, nodePort: 9999 },
            { protocol: "UDP", port: 53 },
          ],
        }),
      ),
    ).toEqual(["web", "NodePort", "10.9.8.7", "<none>", "8888:9999/TCP,53/UDP", "10m", "<none>"]);
  });

  it("LoadBalancer: <pending> until the load balancer reports, then its sorted IPs/hostnames plus external IPs", () => {
    expect(
      row(
        "",
        "services",
        svc({
          type: "LoadBalancer",
          clusterIPs: ["10.9.8.7"],
          ports: [{ protocol: "TCP", port: 80, nodePort: 30080 }],
        }),
      )[3],
    ).toBe("<pending>");
    const lb = svc(
      {
        type: "LoadBalancer",
        clusterIPs: ["10.9.8.7"],
        externalIPs: ["80.11.12.10"],
        ports: [{ protocol: "TCP", port: 80 }],
      },
      { loadBalancer: { ingress: [{ ip: "3.4.5.6" }, { ip: "2.3.4.5" }, { hostname: "lb.example.com" }] } },
    );
    // An ingress without an IP contributes its hostname.
    expect(row("", "services", lb)[3]).toBe("2.3.4.5,3.4.5.6,lb.example.com,80.11.12.10");
  });

  it("ExternalName and headless services", () => {
    expect(
      row("", "services", svc({ type: "ExternalName", externalName: "my.database.example.com" })).slice(1, 5),
    ).toEqual(["ExternalName", "<none>", "my.database.example.com", "<none>"]);
    expect(row("", "services", svc({ type: "ClusterIP", clusterIP: "None", clusterIPs: ["None"] }))[2]).toBe(
      "None",
    );
  });
});

describe("endpoints table", () => {
  const ep = (subsets: Endpoints["subsets"]): Endpoints => ({
    apiVersion: "v1",
    kind: "Endpoints",
    metadata: { name: "web" },
    subsets,
  });

  it("lists ip:port (IPv6 in brackets), three at most, then + N more...", () => {
    expect(
      row(
        "",
        "endpoints",
        ep([{ addresses: [{ ip: "127.0.0.1" }, { ip: "::1" }], ports: [{ port: 8080 }] }]),
      )[1],
    ).toBe("127.0.0.1:8080,[::1]:8080");
    const five = ["10.0.0.1", "10.0.0.2", "10.0.0.3", "10.0.0.4", "10.0.0.5"].map((ip) => ({ ip }));
    expect(row("", "endpoints", ep([{ addresses: five, ports: [{ port: 80 }] }]))[1]).toBe(
      "10.0.0.1:80,10.0.0.2:80,10.0.0.3:80 + 2 more...",
    );
    expect(row("", "endpoints", ep([{ addresses: five.slice(0, 2) }]))[1]).toBe("10.0.0.1,10.0.0.2");
    expect(row("", "endpoints", ep(undefined))[1]).toBe("<none>");
  });
});

describe("event table", () => {
  const event = (e: Partial<Event>): Event => ({
    apiVersion: "v1",
    kind: "Event",
    metadata: { name: "web.17a", namespace: "default" },
    involvedObject: { kind: "Pod", name: "web", fieldPath: "spec.containers{c}" },
    ...e,
  });

  it("has upstream's columns, newest-first and the old ones for -o wide", () => {
    expect(columns("", "events")).toEqual([
      "Last Seen",
      "Type",
      "Reason",
      "Object",
      "Subobject*",
      "Source*",
      "Message",
      "First Seen*",
      "Count*",
      "Name*",
    ]);
  });

  it("prints a core/v1 event", () => {
    const e = event({
      type: "Normal",
      reason: "Pulled",
      message: '  Successfully pulled image "nginx"\n',
      source: { component: "kubelet", host: "node-1" },
      firstTimestamp: ago(3600),
      lastTimestamp: ago(30),
      count: 4,
    });
    expect(row("", "events", e)).toEqual([
      "30s",
      "Normal",
      "Pulled",
      "pod/web",
      "spec.containers{c}",
      "kubelet, node-1",
      'Successfully pulled image "nginx"',
      "60m",
      4,
      "web.17a",
    ]);
  });

  it("prints an events.k8s.io-style event: eventTime, series, reporting fields, count 1", () => {
    const single = event({
      type: "Warning",
      reason: "FailedScheduling",
      eventTime: ago(90),
      reportingComponent: "default-scheduler",
      involvedObject: { kind: "Pod" },
    });
    const cells = row("", "events", single);
    expect([cells[0], cells[3], cells[5], cells[7], cells[8]]).toEqual([
      "90s",
      "pod",
      "default-scheduler",
      "90s",
      1,
    ]);
    const series = { ...single, series: { count: 7, lastObservedTime: ago(5) } } as Event;
    const c2 = row("", "events", series);
    expect([c2[0], c2[8]]).toEqual(["5s", 7]);
  });
});
