/**
 * The garbage collector, with the ReplicaSet controller, in a controller-manager against our API
 * server over HTTP, driven by the real kubectl: `kubectl delete rs --cascade=background |
 * foreground | orphan` behave as upstream, and any resource found by discovery can own another
 * (a ConfigMap owning a ConfigMap), the owner checked by UID.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { describeWithTools } from "../../../scripts/external-tools.ts";
import type { Pod } from "../../api/core.ts";
import { type APIServer, startAPIServer } from "../../apiserver/server.ts";
import { kubectlOK, plainKubectlEnv } from "../../apiserver/testing/kubectl-env.ts";
import { isNotFound } from "../../client/errors.ts";
import { type Clientset, newForConfig } from "../../client/kubernetes/clientset.ts";
import { waitFor } from "../../testing/wait-for.ts";
import { type RunningControllerManager, startControllerManager } from "../controller-manager.ts";

const replicaSetJSON = (name: string, replicas: number, podFinalizers?: string[]) =>
  JSON.stringify({
    apiVersion: "apps/v1",
    kind: "ReplicaSet",
    metadata: { name },
    spec: {
      replicas,
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name }, ...(podFinalizers ? { finalizers: podFinalizers } : {}) },
        spec: { containers: [{ name: "c", image: "nginx" }] },
      },
    },
  });

describeWithTools("the garbage collector driven by kubectl", ["kubectl"], () => {
  let server: APIServer;
  let dir: string;
  let env: NodeJS.ProcessEnv;
  let client: Clientset;
  let manager: RunningControllerManager;
  const logs: string[] = [];

  beforeAll(async () => {
    server = await startAPIServer({ insecurePort: 0 });
    dir = await mkdtemp(join(tmpdir(), "gc-kubectl-"));
    env = await plainKubectlEnv(dir, server.url);
    client = newForConfig({ host: server.url, qps: -1 });
    manager = await startControllerManager({
      client,
      controllers: ["replicaset-controller", "garbage-collector-controller"],
      log: (line) => logs.push(line),
    });
    expect(await manager.synced).toBe(true);
  });
  afterAll(async () => {
    await manager?.stop();
    await server?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  const kubectl = (args: string[], stdin?: string) => kubectlOK(env, args, stdin);

  const pods = async (app: string): Promise<Pod[]> =>
    (await client.coreV1.pods("default").list({ labelSelector: `app=${app}` })).items;
  const rsGone = (name: string) => async () => {
    try {
      await client.appsV1.replicaSets("default").get(name);
      return false;
    } catch (e) {
      return isNotFound(e);
    }
  };

  it("--cascade=background: the ReplicaSet goes at once, its pods after it", async () => {
    await kubectl(["apply", "-f", "-"], replicaSetJSON("bg", 2));
    await waitFor("2 pods", async () => (await pods("bg")).length === 2);
    expect(await kubectl(["delete", "rs", "bg", "--cascade=background"])).toBe(
      'replicaset.apps "bg" deleted\n',
    );
    expect(await rsGone("bg")()).toBe(true);
    await waitFor("the pods collected", async () => (await pods("bg")).length === 0);
  });

  it("--cascade=foreground: the ReplicaSet stays, marked, until its pods are gone", async () => {
    // The pods carry a finalizer of ours, so they stay Terminating until we let them go.
    await kubectl(["apply", "-f", "-"], replicaSetJSON("fg", 2, ["example.com/hold"]));
    await waitFor("2 pods", async () => (await pods("fg")).length === 2);
    await kubectl(["delete", "rs", "fg", "--cascade=foreground", "--wait=false"]);
    const held = await waitFor("both pods deleted by the collector", async () => {
      const ps = await pods("fg");
      return ps.every((p) => p.metadata.deletionTimestamp) && ps;
    });
    const rs = await client.appsV1.replicaSets("default").get("fg");
    expect(rs.metadata.deletionTimestamp).toBeDefined();
    expect(rs.metadata.finalizers).toEqual(["foregroundDeletion"]);
    // One pod released: the ReplicaSet still waits for the other.
    const [first, second] = held.map((p) => p.metadata.name as string);
    await kubectl(["patch", "pod", first, "--type=merge", "-p", '{"metadata":{"finalizers":null}}']);
    await waitFor("the first pod gone", async () => (await pods("fg")).length === 1);
    expect((await client.appsV1.replicaSets("default").get("fg")).metadata.finalizers).toEqual([
      "foregroundDeletion",
    ]);
    await kubectl(["patch", "pod", second, "--type=merge", "-p", '{"metadata":{"finalizers":null}}']);
    await waitFor("the ReplicaSet gone after its last pod", rsGone("fg"));
  });

  it("--cascade=orphan: the ReplicaSet goes, its pods stay without the owner reference", async () => {
    await kubectl(["apply", "-f", "-"], replicaSetJSON("or", 2));
    await waitFor("2 pods", async () => (await pods("or")).length === 2);
    // kubectl waits until the ReplicaSet is gone, that is until the orphan finalizer was removed.
    expect(await kubectl(["delete", "rs", "or", "--cascade=orphan"])).toBe('replicaset.apps "or" deleted\n');
    const out = await kubectl([
      "get",
      "pods",
      "-l",
      "app=or",
      "-o",
      "jsonpath={range .items[*]}{.metadata.name}:{.metadata.ownerReferences}{'\\n'}{end}",
    ]);
    const lines = out.trim().split("\n");
    expect(lines).toHaveLength(2);
    // Upstream omits the emptied list (omitempty); our server keeps `[]` after the patch.
    for (const l of lines) expect(l).toMatch(/^or-[a-z0-9]+:(\[\])?$/);
  });

  it("any resource can own another: a ConfigMap's dependents go with it; a UID that does not match is dangling", async () => {
    await kubectl(["create", "configmap", "parent"]);
    await kubectl(["create", "configmap", "recreated"]);
    const uid = (await kubectl(["get", "cm", "parent", "-o", "jsonpath={.metadata.uid}"])).trim();
    const child = (name: string, owner: string, ownerUID: string) =>
      JSON.stringify({
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: {
          name,
          ownerReferences: [{ apiVersion: "v1", kind: "ConfigMap", name: owner, uid: ownerUID }],
        },
      });
    await kubectl(["apply", "-f", "-"], child("child", "parent", uid));
    // Names an owner `recreated` that exists, but under another UID: the collector deletes it.
    await kubectl(["apply", "-f", "-"], child("stale", "recreated", "00000000-0000-0000-0000-000000000000"));
    const cms = () => client.coreV1.configMaps("default");
    await waitFor("the stale dependent collected", async () => {
      const names = (await cms().list()).items.map((c) => c.metadata.name);
      return !names.includes("stale") && names;
    });
    expect((await cms().get("child")).metadata.name).toBe("child");
    expect((await cms().get("recreated")).metadata.name).toBe("recreated");
    await kubectl(["delete", "cm", "parent"]);
    await waitFor("the child collected with its owner", async () => {
      const names = (await cms().list()).items.map((c) => c.metadata.name);
      return !names.includes("child") && names;
    });
  });
});
