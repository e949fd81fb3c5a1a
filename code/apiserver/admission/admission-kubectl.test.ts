import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { describeWithTools } from "../../../scripts/external-tools.ts";
import { type APIServer, startAPIServer } from "../server.ts";
import { plainKubectlEnv, runKubectl } from "../testing/kubectl-env.ts";

describeWithTools("the built-in admission plugins as kubectl meets them", ["kubectl"], () => {
  let server: APIServer;
  let dir: string;
  let env: NodeJS.ProcessEnv;

  beforeAll(async () => {
    server = await startAPIServer({ insecurePort: 0, admission: {} });
    dir = await mkdtemp(join(tmpdir(), "admission-kubectl-"));
    env = await plainKubectlEnv(dir, server.url);
  });
  afterAll(async () => {
    await server?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  const kubectl = (args: string[]) => runKubectl(env, args);
  async function ok(args: string[]): Promise<string> {
    const r = await kubectl(args);
    if (r.code !== 0) throw new Error(`kubectl ${args.join(" ")}: ${r.err}`);
    return r.out;
  }

  it("run in a namespace being deleted is refused by NamespaceLifecycle", async () => {
    expect(await ok(["create", "namespace", "leaving"])).toBe("namespace/leaving created\n");
    // The server stands in for the serviceaccounts controller: `default` comes with the namespace.
    expect(await ok(["get", "serviceaccount", "default", "-n", "leaving", "-o", "name"])).toBe(
      "serviceaccount/default\n",
    );
    // No namespace controller yet: the namespace stays Terminating.
    expect(await ok(["delete", "namespace", "leaving", "--wait=false"])).toBe(
      'namespace "leaving" deleted\n',
    );
    const r = await kubectl(["run", "web", "--image=nginx", "-n", "leaving"]);
    expect([r.code, r.err]).toEqual([
      1,
      'Error from server (Forbidden): pods "web" is forbidden: unable to create new content in namespace leaving because it is being terminated\n',
    ]);
    const keep = await kubectl(["delete", "namespace", "kube-system"]);
    expect(keep.err).toBe(
      'Error from server (Forbidden): namespaces "kube-system" is forbidden: this namespace may not be deleted\n',
    );
  });

  it("a pod gets the default service account, its token volume, priority and tolerations", async () => {
    expect(await ok(["run", "plain", "--image=nginx"])).toBe("pod/plain created\n");
    const pod = JSON.parse(await ok(["get", "pod", "plain", "-o", "json"]));
    expect(pod.spec.serviceAccountName).toBe("default");
    expect(pod.spec.volumes[0].name).toMatch(/^kube-api-access-/);
    expect(pod.spec.containers[0].volumeMounts[0].mountPath).toBe(
      "/var/run/secrets/kubernetes.io/serviceaccount",
    );
    expect([pod.spec.priority, pod.spec.tolerations.length]).toEqual([0, 2]);
    expect(await ok(["get", "priorityclasses", "-o", "name"])).toBe(
      "priorityclass.scheduling.k8s.io/system-cluster-critical\npriorityclass.scheduling.k8s.io/system-node-critical\n",
    );
  });

  it("create quota, run past it: the quota message; get quota shows used/hard", async () => {
    expect(await ok(["create", "namespace", "team"])).toBe("namespace/team created\n");
    expect(await ok(["create", "quota", "q", "--hard=pods=1", "-n", "team"])).toBe(
      "resourcequota/q created\n",
    );
    expect(await ok(["run", "a", "--image=nginx", "-n", "team"])).toBe("pod/a created\n");
    const r = await kubectl(["run", "b", "--image=nginx", "-n", "team"]);
    expect([r.code, r.err]).toEqual([
      1,
      'Error from server (Forbidden): pods "b" is forbidden: exceeded quota: q, requested: pods=1, used: pods=1, limited: pods=1\n',
    ]);
    expect(await ok(["get", "quota", "-n", "team"])).toMatch(
      /^NAME\s+AGE\s+REQUEST\s+LIMIT\nq\s+\d+s\s+pods: 1\/1\s*\n$/,
    );
  });

  it("a LimitRange's defaults reach the pod kubectl runs", async () => {
    const file = join(dir, "lr.yaml");
    await writeFile(
      file,
      "apiVersion: v1\nkind: LimitRange\nmetadata: {name: sizes}\nspec:\n  limits:\n  - type: Container\n    default: {cpu: 500m}\n    defaultRequest: {cpu: 100m}\n    max: {cpu: '1'}\n",
    );
    expect(await ok(["apply", "-f", file])).toBe("limitrange/sizes created\n");
    expect(await ok(["get", "limits"])).toMatch(/^NAME\s+CREATED AT\nsizes\s+\d{4}-\d\d-\d\dT/);
    await ok(["run", "sized", "--image=nginx"]);
    expect(await ok(["get", "pod", "sized", "-o", "jsonpath={.spec.containers[0].resources}"])).toBe(
      '{"limits":{"cpu":"500m"},"requests":{"cpu":"100m"}}',
    );
    const big = await kubectl([
      "run",
      "big",
      "--image=nginx",
      "--overrides",
      '{"spec":{"containers":[{"name":"big","image":"nginx","resources":{"limits":{"cpu":"2"}}}]}}',
    ]);
    expect(big.err).toBe(
      'Error from server (Forbidden): pods "big" is forbidden: maximum cpu usage per Container is 1, but limit is 2\n',
    );
  });
});
