import { describe, expect, it } from "vitest";
import type { KubeObject } from "../../../api/meta.ts";
import type { UserInfo } from "../../authn/user.ts";
import { isStatusError, newNotFound } from "../../errors.ts";
import type { Store } from "../../registry/store.ts";
import type { Attributes } from "../interfaces.ts";
import { forbiddenLabels, modifiedLabels, NodeRestriction } from "./noderestriction.ts";

const nodeA: UserInfo = { name: "system:node:node-a", groups: ["system:nodes", "system:authenticated"] };

/** A store stand-in that answers get from a fixed set of objects. */
function fakeStores(objects: KubeObject[]): (group: string, resource: string) => Store | undefined {
  return (_group, resource) =>
    ({
      get: async (namespace: string, name: string) => {
        const found = objects.find(
          (o) =>
            (o.kind ?? "").toLowerCase() === resource.replace(/s$/, "") &&
            (o.metadata.namespace ?? "") === namespace &&
            o.metadata.name === name,
        );
        if (!found) throw newNotFound({ group: "", resource }, name);
        return found;
      },
    }) as unknown as Store;
}

const podOn = (name: string, nodeName: string, extra: Partial<KubeObject> = {}): KubeObject => ({
  apiVersion: "v1",
  kind: "Pod",
  metadata: { namespace: "default", name, uid: `uid-${name}`, labels: { app: "web" } },
  spec: { nodeName, containers: [{ name: "c", image: "nginx" }] },
  ...extra,
});
const nodeObj = (name: string, labels: Record<string, string> = {}, taints?: unknown[]): KubeObject => ({
  apiVersion: "v1",
  kind: "Node",
  metadata: { name, uid: `uid-${name}`, labels },
  spec: taints ? { taints } : {},
});

const plugin = new NodeRestriction(
  fakeStores([podOn("mine", "node-a"), podOn("theirs", "node-b"), nodeObj("node-a")]),
);

function attrs(over: Partial<Attributes>, user = nodeA): Attributes {
  return {
    name: "",
    namespace: "default",
    resource: { group: "", version: "v1", resource: "pods" },
    subresource: "",
    kind: { group: "", version: "v1", kind: "Pod" },
    operation: "CREATE",
    dryRun: false,
    userInfo: user,
    ...over,
  };
}

/** The refusal's message, or "admitted". */
async function verdict(a: Attributes): Promise<string> {
  try {
    await plugin.admit(a);
    return "admitted";
  } catch (e) {
    if (isStatusError(e)) return `${e.code} ${e.status.message}`;
    throw e;
  }
}

describe("NodeRestriction", () => {
  it("leaves users that are not nodes alone, and refuses a node without a name", async () => {
    expect(await verdict(attrs({ name: "x", operation: "DELETE" }, { name: "jane", groups: [] }))).toBe(
      "admitted",
    );
    expect(
      await verdict(
        attrs({ name: "x", operation: "DELETE" }, { name: "system:node:", groups: ["system:nodes"] }),
      ),
    ).toBe('403 pods "x" is forbidden: could not determine node from user "system:node:"');
  });

  it("lets a node modify only its own Node object", async () => {
    const node = { group: "", version: "v1", resource: "nodes" };
    expect(await verdict(attrs({ resource: node, namespace: "", name: "node-b", operation: "UPDATE" }))).toBe(
      '403 nodes "node-b" is forbidden: node "node-a" is not allowed to modify node "node-b"',
    );
    expect(await verdict(attrs({ resource: node, namespace: "", name: "node-b", operation: "DELETE" }))).toBe(
      '403 nodes "node-b" is forbidden: node "node-a" is not allowed to modify node "node-b"',
    );
    const ok = nodeObj("node-a", {
      "kubernetes.io/hostname": "a",
      "node.kubernetes.io/instance-type": "m5",
      "example.com/x": "1",
    });
    expect(await verdict(attrs({ resource: node, namespace: "", name: "node-a", object: ok }))).toBe(
      "admitted",
    );
  });

  it("refuses the labels and taints that would steer workloads to the node", async () => {
    const node = { group: "", version: "v1", resource: "nodes" };
    const create = nodeObj("node-a", {
      "node-restriction.kubernetes.io/pci": "true",
      "node-role.kubernetes.io/control-plane": "",
      "kubelet.kubernetes.io/ok": "1",
      "sub.node.kubernetes.io/ok": "1",
    });
    expect(await verdict(attrs({ resource: node, namespace: "", name: "node-a", object: create }))).toBe(
      '403 nodes "node-a" is forbidden: node "node-a" is not allowed to set the following labels: node-restriction.kubernetes.io/pci, node-role.kubernetes.io/control-plane',
    );
    const old = nodeObj("node-a", { "example.k8s.io/zone": "z" }, [
      { key: "dedicated", effect: "NoSchedule" },
    ]);
    const relabelled = nodeObj("node-a", {}, [{ key: "dedicated", effect: "NoSchedule" }]);
    expect(
      await verdict(
        attrs({
          resource: node,
          namespace: "",
          name: "node-a",
          operation: "UPDATE",
          object: relabelled,
          oldObject: old,
        }),
      ),
    ).toBe('403 nodes "node-a" is forbidden: is not allowed to modify labels: example.k8s.io/zone');
    const untainted = nodeObj("node-a", { "example.k8s.io/zone": "z" }, []);
    expect(
      await verdict(
        attrs({
          resource: node,
          namespace: "",
          name: "node-a",
          operation: "UPDATE",
          object: untainted,
          oldObject: old,
        }),
      ),
    ).toBe('403 nodes "node-a" is forbidden: node "node-a" is not allowed to modify taints');
    // nil and empty taints are the same taints
    expect(
      await verdict(
        attrs({
          resource: node,
          namespace: "",
          name: "node-a",
          operation: "UPDATE",
          object: nodeObj("node-a", {}, []),
          oldObject: nodeObj("node-a"),
        }),
      ),
    ).toBe("admitted");
  });

  it("computes modified and forbidden labels as upstream", () => {
    expect([...modifiedLabels({ a: "1", b: "2" }, { b: "3", c: "4" })].sort()).toEqual(["a", "b", "c"]);
    expect(
      forbiddenLabels(new Set(["kubernetes.io/os", "beta.kubernetes.io/arch", "x.k8s.io/y", "plain"])),
    ).toEqual(["x.k8s.io/y"]);
  });

  it("lets a node update the status of its own pods only, without touching labels", async () => {
    const status = (pod: KubeObject, next: KubeObject) =>
      verdict(
        attrs({
          name: pod.metadata.name,
          subresource: "status",
          operation: "UPDATE",
          object: next,
          oldObject: pod,
        }),
      );
    const mine = podOn("mine", "node-a");
    expect(await status(mine, { ...mine, status: { phase: "Running" } })).toBe("admitted");
    const theirs = podOn("theirs", "node-b");
    expect(await status(theirs, { ...theirs, status: { phase: "Running" } })).toBe(
      '403 pods "theirs" is forbidden: node "node-a" can only update pod status for pods with spec.nodeName set to itself',
    );
    expect(await status(mine, { ...mine, metadata: { ...mine.metadata, labels: { app: "db" } } })).toBe(
      '403 pods "mine" is forbidden: node "node-a" cannot update labels through pod status',
    );
  });

  it("lets a node delete and evict only its own pods", async () => {
    expect(await verdict(attrs({ name: "mine", operation: "DELETE" }))).toBe("admitted");
    expect(await verdict(attrs({ name: "theirs", operation: "DELETE" }))).toBe(
      '403 pods "theirs" is forbidden: node "node-a" can only delete pods with spec.nodeName set to itself',
    );
    expect(await verdict(attrs({ name: "gone", operation: "DELETE" }))).toBe('404 pods "gone" not found');
    const eviction = (name: string) =>
      verdict(
        attrs({
          name,
          subresource: "eviction",
          object: { apiVersion: "policy/v1", kind: "Eviction", metadata: { name } },
        }),
      );
    expect(await eviction("mine")).toBe("admitted");
    expect(await eviction("theirs")).toBe(
      '403 pods "theirs" is forbidden: node node-a can only evict pods with spec.nodeName set to itself',
    );
    expect(await verdict(attrs({ name: "mine", subresource: "binding" }))).toBe(
      `403 pods "mine" is forbidden: unexpected pod subresource "binding", only 'status' and 'eviction' are allowed`,
    );
  });

  it("lets a node create only mirror pods bound to and owned by itself, referencing nothing", async () => {
    const mirror = (over: (p: KubeObject) => void = () => {}) => {
      const p = podOn("static-web-node-a", "node-a");
      p.metadata.annotations = { "kubernetes.io/config.mirror": "hash" };
      p.metadata.ownerReferences = [
        { apiVersion: "v1", kind: "Node", name: "node-a", uid: "uid-node-a", controller: true },
      ];
      over(p);
      return verdict(attrs({ object: p }));
    };
    expect(await mirror()).toBe("admitted");
    expect(await mirror((p) => delete p.metadata.annotations)).toBe(
      '403 pods "static-web-node-a" is forbidden: pod does not have "kubernetes.io/config.mirror" annotation, node "node-a" can only create mirror pods',
    );
    expect(await mirror((p) => ((p.spec as { nodeName: string }).nodeName = "node-b"))).toBe(
      '403 pods "static-web-node-a" is forbidden: node "node-a" can only create pods with spec.nodeName set to itself',
    );
    expect(await mirror((p) => (p.metadata.ownerReferences = []))).toBe(
      '403 pods "static-web-node-a" is forbidden: node "node-a" can only create pods with an owner reference set to itself',
    );
    expect(await mirror((p) => ((p.metadata.ownerReferences as { uid: string }[])[0].uid = "forged"))).toBe(
      '403 pods "static-web-node-a" is forbidden: node node-a UID mismatch: expected forged got uid-node-a',
    );
    expect(
      await mirror(
        (p) => ((p.spec as Record<string, unknown>).volumes = [{ name: "v", secret: { secretName: "db" } }]),
      ),
    ).toBe(
      '403 pods "static-web-node-a" is forbidden: node "node-a" can not create pods that reference secrets',
    );
    expect(await mirror((p) => ((p.spec as Record<string, unknown>).serviceAccountName = "default"))).toBe(
      '403 pods "static-web-node-a" is forbidden: node "node-a" can not create pods that reference a service account',
    );
  });

  it("lets a node request tokens only bound to its own pods", async () => {
    const token = (boundObjectRef?: Record<string, string>) =>
      verdict(
        attrs({
          name: "default",
          resource: { group: "", version: "v1", resource: "serviceaccounts" },
          subresource: "token",
          object: {
            apiVersion: "authentication.k8s.io/v1",
            kind: "TokenRequest",
            metadata: {},
            spec: { boundObjectRef },
          },
        }),
      );
    expect(await token({ apiVersion: "v1", kind: "Pod", name: "mine", uid: "uid-mine" })).toBe("admitted");
    expect(await token()).toBe(
      '403 serviceaccounts "default" is forbidden: node requested token not bound to a pod',
    );
    expect(await token({ apiVersion: "v1", kind: "Pod", name: "mine" })).toBe(
      '403 serviceaccounts "default" is forbidden: node requested token with a pod binding without a uid',
    );
    expect(await token({ apiVersion: "v1", kind: "Pod", name: "mine", uid: "old" })).toBe(
      '403 serviceaccounts "default" is forbidden: the UID in the bound object reference (old) does not match the UID in record. The object might have been deleted and then recreated',
    );
    expect(await token({ apiVersion: "v1", kind: "Pod", name: "theirs", uid: "uid-theirs" })).toBe(
      '403 serviceaccounts "default" is forbidden: node requested token bound to a pod scheduled on a different node',
    );
  });

  it("lets a node create and renew only its own Lease in kube-node-lease", async () => {
    const leases = { group: "coordination.k8s.io", version: "v1", resource: "leases" };
    const lease = (name: string) => ({
      apiVersion: "coordination.k8s.io/v1",
      kind: "Lease",
      metadata: { name },
    });
    expect(
      await verdict(attrs({ resource: leases, namespace: "kube-node-lease", object: lease("node-a") })),
    ).toBe("admitted");
    expect(
      await verdict(attrs({ resource: leases, namespace: "kube-node-lease", object: lease("node-b") })),
    ).toBe(
      '403 leases.coordination.k8s.io "node-b" is forbidden: can only access node lease with the same name as the requesting node',
    );
    expect(
      await verdict(
        attrs({ resource: leases, namespace: "kube-node-lease", name: "node-b", operation: "UPDATE" }),
      ),
    ).toBe(
      '403 leases.coordination.k8s.io "node-b" is forbidden: can only access node lease with the same name as the requesting node',
    );
    expect(await verdict(attrs({ resource: leases, namespace: "default", object: lease("node-a") }))).toBe(
      '403 leases.coordination.k8s.io "node-a" is forbidden: can only access leases in the "kube-node-lease" system namespace',
    );
  });
});
