import { describe, expect, it } from "vitest";
import type { KubeObject } from "../../api/meta.ts";
import { quotaPrinters } from "./quota.ts";

describe("the quota tables", () => {
  const now = new Date("2026-01-01T00:01:00Z");
  it("resourcequotas: NAME AGE REQUEST LIMIT, used/hard from status, limits.* under LIMIT", () => {
    const p = quotaPrinters.resourcequotas;
    expect(p.columns.map((c) => c.name)).toEqual(["Name", "Age", "Request", "Limit"]);
    const rq = {
      apiVersion: "v1",
      kind: "ResourceQuota",
      metadata: { name: "q", creationTimestamp: "2026-01-01T00:00:00Z" },
      status: {
        hard: { pods: "10", "requests.cpu": "2", "limits.memory": "2048Mi", configmaps: "5" },
        used: { pods: "3", "requests.cpu": "1500m", "limits.memory": "1Gi" },
      },
    } as KubeObject;
    expect(p.print(rq, now).cells).toEqual([
      "q",
      "60s",
      "configmaps: 0/5, pods: 3/10, requests.cpu: 1500m/2",
      "limits.memory: 1Gi/2Gi",
    ]);
  });

  it("limitranges: NAME CREATED AT", () => {
    const p = quotaPrinters.limitranges;
    expect(p.columns.map((c) => c.name)).toEqual(["Name", "Created At"]);
    const lr = {
      apiVersion: "v1",
      kind: "LimitRange",
      metadata: { name: "lr", creationTimestamp: "2026-01-01T00:00:00Z" },
    };
    expect(p.print(lr as KubeObject, now).cells).toEqual(["lr", "2026-01-01T00:00:00Z"]);
  });
});
