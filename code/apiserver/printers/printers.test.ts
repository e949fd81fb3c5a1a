import { describe, expect, it } from "vitest";
import type { KubeObject } from "../../api/meta.ts";
import { convertToTable } from "./printers.ts";

const now = new Date("2024-05-01T12:00:00Z");
/** An object of a kind no printer knows. */
const widget: KubeObject = {
  apiVersion: "example.com/v1",
  kind: "Widget",
  metadata: { name: "w", creationTimestamp: "2024-05-01T11:59:00Z" },
};

describe("the printer table", () => {
  it("a resource without a printer gets upstream's default table", () => {
    const t = convertToTable("example.com", "widgets", [widget], now);
    expect(t.columnDefinitions.map((c) => [c.name, c.type, c.format])).toEqual([
      ["Name", "string", "name"],
      ["Created At", "date", ""],
    ]);
    expect(t.rows[0].cells).toEqual(["w", "2024-05-01T11:59:00Z"]);
  });

  it("every printer gives one cell per column", () => {
    const resources: [string, string][] = [
      ["", "pods"],
      ["", "nodes"],
      ["", "namespaces"],
      ["", "services"],
      ["", "endpoints"],
      ["", "events"],
      ["", "configmaps"],
      ["", "secrets"],
      ["", "serviceaccounts"],
      ["apps", "deployments"],
      ["apps", "replicasets"],
      ["coordination.k8s.io", "leases"],
      ["scheduling.k8s.io", "priorityclasses"],
    ];
    for (const [group, resource] of resources) {
      // An object with nothing but a name must not crash any printer.
      const t = convertToTable(group, resource, [{ metadata: { name: "x" } }], now);
      expect(t.rows[0].cells.length, resource).toBe(t.columnDefinitions.length);
      expect(t.columnDefinitions.length, resource).toBeGreaterThan(2);
    }
  });
});
