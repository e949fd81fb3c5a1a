import { describe, expect, it } from "vitest";
import type { KubeObject } from "../../../api/meta.ts";
import { Graph, mirrorPodAnnotationKey } from "./graph.ts";
import { podHandlers } from "./graph-populator.ts";
import { podConfigMapNames, podSecretNames } from "./pod-references.ts";

function pod(
  name: string,
  nodeName: string,
  spec: Record<string, unknown> = {},
  uid = `uid-${name}`,
): KubeObject {
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { namespace: "default", name, uid },
    spec: { nodeName, containers: [{ name: "c", image: "nginx" }], ...spec },
  };
}

const withSecret = (secret: string) => ({ volumes: [{ name: "v", secret: { secretName: secret } }] });
const can = (
  g: Graph,
  node: string,
  type: "secret" | "pod" | "configmap" | "pvc" | "pv" | "serviceAccount",
  name: string,
  ns = "default",
) => g.hasPathFrom(node, type, ns, name).found;

describe("the node authorizer graph", () => {
  it("gives a node the secrets of the pods bound to it, and no other node", () => {
    const g = new Graph();
    podHandlers(g).add(pod("web", "node-a", withSecret("db")));
    expect(can(g, "node-a", "secret", "db")).toBe(true);
    expect(can(g, "node-a", "pod", "web")).toBe(true);
    expect(can(g, "node-b", "secret", "db")).toBe(false);
    expect(g.hasPathFrom("node-b", "secret", "default", "db")).toEqual({
      found: false,
      why: "unknown node 'node-b' cannot get secret default/db",
    });
    expect(can(g, "node-a", "secret", "db", "other")).toBe(false);
  });

  it("leaves an unbound pod out of the graph until it is bound", () => {
    const g = new Graph();
    const h = podHandlers(g);
    const pending = pod("web", "", withSecret("db"));
    h.add(pending);
    expect(g.describe()).toEqual([]);
    const bound = pod("web", "node-a", withSecret("db"));
    h.update(pending, bound);
    expect(can(g, "node-a", "secret", "db")).toBe(true);
  });

  it("keeps a secret shared by pods on two nodes until the last pod goes", () => {
    const g = new Graph();
    const h = podHandlers(g);
    const a = pod("a", "node-a", withSecret("shared"));
    const b = pod("b", "node-b", withSecret("shared"));
    h.add(a);
    h.add(b);
    expect(can(g, "node-a", "secret", "shared")).toBe(true);
    expect(can(g, "node-b", "secret", "shared")).toBe(true);
    h.delete(a);
    expect(can(g, "node-a", "secret", "shared")).toBe(false);
    expect(can(g, "node-b", "secret", "shared")).toBe(true);
    h.delete(b);
    // Orphans go with their last edge: nothing is left.
    expect(g.describe()).toEqual([]);
  });

  it("moves a pod's grants with the pod: recreated elsewhere, or unbound", () => {
    const g = new Graph();
    const h = podHandlers(g);
    const first = pod("web", "node-a", withSecret("db"), "uid-1");
    h.add(first);
    // Same name, new uid, another node (a StatefulSet pod recreated): node-a loses the secret.
    const again = pod("web", "node-b", withSecret("db"), "uid-2");
    h.update(first, again);
    expect(can(g, "node-a", "secret", "db")).toBe(false);
    expect(can(g, "node-b", "secret", "db")).toBe(true);
    // Cleared nodeName (this miniature's validation allows it): the grant goes.
    h.update(again, pod("web", "", withSecret("db"), "uid-2"));
    expect(can(g, "node-b", "secret", "db")).toBe(false);
    expect(g.describe()).toEqual([]);
  });

  it("ignores an update that keeps node and uid (a status change)", () => {
    const g = new Graph();
    const h = podHandlers(g);
    const p = pod("web", "node-a", withSecret("db"));
    h.add(p);
    // Even if the spec claimed a new secret, a bound pod's references are immutable upstream.
    h.update(p, { ...pod("web", "node-a", withSecret("other")), status: { phase: "Running" } });
    expect(can(g, "node-a", "secret", "db")).toBe(true);
    expect(can(g, "node-a", "secret", "other")).toBe(false);
  });

  it("adds the service account, configmaps, env secrets and claims, and follows pvc ← pv ← secret", () => {
    const g = new Graph();
    podHandlers(g).add(
      pod("web", "node-a", {
        serviceAccountName: "builder",
        imagePullSecrets: [{ name: "registry" }],
        containers: [
          {
            name: "c",
            image: "x",
            env: [{ name: "P", valueFrom: { secretKeyRef: { name: "env-secret", key: "p" } } }],
            envFrom: [{ configMapRef: { name: "settings" } }],
          },
        ],
        volumes: [
          { name: "data", persistentVolumeClaim: { claimName: "data" } },
          { name: "scratch", ephemeral: { volumeClaimTemplate: {} } },
          { name: "p", projected: { sources: [{ configMap: { name: "projected-cm" } }] } },
        ],
      }),
    );
    for (const s of ["registry", "env-secret"]) expect(can(g, "node-a", "secret", s)).toBe(true);
    for (const c of ["settings", "projected-cm"]) expect(can(g, "node-a", "configmap", c)).toBe(true);
    expect(can(g, "node-a", "serviceAccount", "builder")).toBe(true);
    expect(can(g, "node-a", "pvc", "data")).toBe(true);
    expect(can(g, "node-a", "pvc", "web-scratch")).toBe(true);

    g.addPV({
      apiVersion: "v1",
      kind: "PersistentVolume",
      metadata: { name: "pv-1" },
      spec: {
        claimRef: { namespace: "default", name: "data" },
        csi: {
          driver: "d",
          volumeHandle: "h",
          nodePublishSecretRef: { namespace: "default", name: "csi-creds" },
        },
      },
    });
    expect(can(g, "node-a", "pv", "pv-1", "")).toBe(true);
    expect(can(g, "node-a", "secret", "csi-creds")).toBe(true);
    expect(can(g, "node-b", "pv", "pv-1", "")).toBe(false);
    g.deletePV("pv-1");
    expect(can(g, "node-a", "secret", "csi-creds")).toBe(false);
  });

  it("grants a mirror pod nothing but itself", () => {
    const g = new Graph();
    const mirror = pod("static-web", "node-a", { serviceAccountName: "default", ...withSecret("db") });
    mirror.metadata.annotations = { [mirrorPodAnnotationKey]: "hash" };
    podHandlers(g).add(mirror);
    expect(can(g, "node-a", "pod", "static-web")).toBe(true);
    expect(can(g, "node-a", "secret", "db")).toBe(false);
    expect(can(g, "node-a", "serviceAccount", "default")).toBe(false);
  });
});

describe("a pod's references", () => {
  it("visits init and ephemeral containers and every secret-bearing volume, once each", () => {
    const p = {
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "p" },
      spec: {
        initContainers: [{ envFrom: [{ secretRef: { name: "init" } }] }],
        ephemeralContainers: [{ env: [{ valueFrom: { configMapKeyRef: { name: "debug-cm" } } }] }],
        volumes: [
          { name: "a", secret: { secretName: "s" } },
          { name: "b", csi: { nodePublishSecretRef: { name: "csi" } } },
          { name: "c", projected: { sources: [{ secret: { name: "s" } }] } },
        ],
      },
    };
    expect(podSecretNames(p).sort()).toEqual(["csi", "init", "s"]);
    expect(podConfigMapNames(p)).toEqual(["debug-cm"]);
  });
});
