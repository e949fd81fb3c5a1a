import { spawn } from "node:child_process";
import { chmod, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { describeWithTools } from "../../scripts/external-tools.ts";
import { type APIServer, startAPIServer } from "./server.ts";
import { plainKubectlEnv, runKubectl } from "./testing/kubectl-env.ts";

describeWithTools("the real kubectl against our API server", ["kubectl"], () => {
  let server: APIServer;
  let dir: string;
  let env: NodeJS.ProcessEnv;

  beforeAll(async () => {
    server = await startAPIServer({ insecurePort: 0 });
    dir = await mkdtemp(join(tmpdir(), "kubectl-test-"));
    // A fresh discovery cache: an old one for the same port would describe another server.
    env = await plainKubectlEnv(dir, server.url);
  });
  afterAll(async () => {
    await server?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  /** Runs kubectl; resolves with its output and exit code (never rejects). */
  const kubectl = (args: string[], extraEnv: Record<string, string> = {}, stdin?: string) =>
    runKubectl({ ...env, ...extraEnv }, args, stdin);

  async function ok(args: string[], extraEnv: Record<string, string> = {}, stdin?: string): Promise<string> {
    const r = await kubectl(args, extraEnv, stdin);
    expect(r.err, `kubectl ${args.join(" ")}`).toBe("");
    expect(r.code, `kubectl ${args.join(" ")}`).toBe(0);
    return r.out;
  }

  it("create namespace | deployment | configmap", async () => {
    expect(await ok(["create", "namespace", "team"])).toBe("namespace/team created\n");
    expect(await ok(["create", "deployment", "web", "--image=nginx", "--replicas=2"])).toBe(
      "deployment.apps/web created\n",
    );
    expect(await ok(["create", "configmap", "settings", "--from-literal=mode=fast"])).toBe(
      "configmap/settings created\n",
    );
    expect(await ok(["run", "one", "--image=nginx", "--labels=app=one,tier=fe"])).toBe("pod/one created\n");
    expect(await ok(["run", "two", "--image=nginx", "-n", "team"])).toBe("pod/two created\n");
  });

  it("get in every output format", async () => {
    const table = await ok(["get", "pods"]);
    expect(table).toMatch(/^NAME\s+READY\s+STATUS\s+RESTARTS\s+AGE\none\s+0\/1\s+Pending\s+0\s+\d+s\n$/);
    const all = await ok(["get", "pods", "-A"]);
    expect(all).toMatch(/^NAMESPACE\s+NAME/);
    expect(all).toMatch(/\ndefault\s+one\s/);
    expect(all).toMatch(/\nteam\s+two\s/);
    expect(await ok(["get", "pods", "-o", "wide"])).toMatch(
      /^NAME\s+READY\s+STATUS\s+RESTARTS\s+AGE\s+IP\s+NODE\s+NOMINATED NODE\s+READINESS GATES\n/,
    );
    expect(await ok(["get", "pod", "one", "-o", "yaml"])).toMatch(/^apiVersion: v1\nkind: Pod\nmetadata:\n/);
    expect(JSON.parse(await ok(["get", "pod", "one", "-o", "json"])).spec.containers[0].image).toBe("nginx");
    expect(await ok(["get", "pods", "-A", "-o", "name"])).toBe("pod/one\npod/two\n");
    expect(await ok(["get", "pod", "one", "-o", "jsonpath={.metadata.labels.tier}"])).toBe("fe");
    expect(await ok(["get", "pods", "-A", "-l", "run=two", "-o", "name"])).toBe("pod/two\n");
    expect(await ok(["get", "pods", "--show-labels"])).toMatch(/LABELS\none\s.*app=one,tier=fe\n$/);
    expect(await ok(["get", "deployments"])).toMatch(
      /^NAME\s+READY\s+UP-TO-DATE\s+AVAILABLE\s+AGE\nweb\s+0\/2\s/,
    );
    const missing = await kubectl(["get", "pod", "nope"]);
    expect(missing.code).toBe(1);
    expect(missing.err).toBe('Error from server (NotFound): pods "nope" not found\n');
  });

  it("get -w prints the row of a pod created while it watches", async () => {
    const child = spawn("kubectl", ["get", "pods", "-w", "-n", "team"], { env });
    let out = "";
    child.stdout.on("data", (d) => {
      out += d;
    });
    try {
      await waitFor(() => out.includes("two"));
      await ok(["run", "watched", "--image=nginx", "-n", "team"]);
      await waitFor(() => /\nwatched\s+0\/1\s+Pending/.test(out));
    } finally {
      child.kill();
    }
    expect(out).toMatch(/^NAME\s+READY\s+STATUS/);
  });

  it("apply -f: created, unchanged, configured", async () => {
    const file = join(dir, "cm.yaml");
    const manifest = (v: string) =>
      `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: applied\n  labels: {app: demo}\ndata:\n  level: "${v}"\n`;
    await writeFile(file, manifest("1"));
    expect(await ok(["apply", "-f", file])).toBe("configmap/applied created\n");
    expect(await ok(["apply", "-f", file])).toBe("configmap/applied unchanged\n");
    await writeFile(file, manifest("2"));
    expect(await ok(["apply", "-f", file])).toBe("configmap/applied configured\n");
    expect(await ok(["get", "cm", "applied", "-o", "jsonpath={.data.level}"])).toBe("2");
  });

  it("apply --server-side: created, then serverside-applied; another manager conflicts", async () => {
    const file = join(dir, "ssa.yaml");
    await writeFile(file, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ssa\ndata:\n  owner: first\n");
    expect(await ok(["apply", "--server-side", "-f", file])).toBe("configmap/ssa serverside-applied\n");
    await writeFile(
      file,
      "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ssa\ndata:\n  owner: second\n",
    );
    const conflict = await kubectl(["apply", "--server-side", "--field-manager=other", "-f", file]);
    expect(conflict.code).toBe(1);
    expect(conflict.err).toContain('conflict with "kubectl"');
    expect(
      await ok(["apply", "--server-side", "--field-manager=other", "--force-conflicts", "-f", file]),
    ).toBe("configmap/ssa serverside-applied\n");
    expect(await ok(["get", "cm", "ssa", "-o", "jsonpath={.data.owner}"])).toBe("second");
  });

  it("label, annotate, describe", async () => {
    expect(await ok(["label", "pod", "one", "env=dev"])).toBe("pod/one labeled\n");
    expect(await ok(["annotate", "pod", "one", "owner=me"])).toBe("pod/one annotated\n");
    const described = await ok(["describe", "pod", "one"]);
    expect(described).toMatch(/^Name:\s+one\nNamespace:\s+default\n/);
    expect(described).toMatch(/Labels:\s+app=one\n\s+env=dev\n\s+tier=fe\n/);
    expect(described).toMatch(/Annotations:\s+owner: me\n/);
    expect(described).toMatch(/Status:\s+Pending\n/);
  });

  it("scale deployment", async () => {
    expect(await ok(["scale", "deployment", "web", "--replicas=4"])).toBe("deployment.apps/web scaled\n");
    expect(await ok(["get", "deploy", "web", "-o", "jsonpath={.spec.replicas}"])).toBe("4");
  });

  it("patch: strategic, merge, json, and --subresource=status", async () => {
    expect(await ok(["patch", "deploy", "web", "-p", '{"spec":{"replicas":5}}'])).toBe(
      "deployment.apps/web patched\n",
    );
    expect(await ok(["patch", "deploy", "web", "--type=merge", "-p", '{"spec":{"replicas":6}}'])).toBe(
      "deployment.apps/web patched\n",
    );
    expect(
      await ok([
        "patch",
        "deploy",
        "web",
        "--type=json",
        "-p",
        '[{"op":"replace","path":"/spec/replicas","value":7}]',
      ]),
    ).toBe("deployment.apps/web patched\n");
    expect(
      await ok([
        "patch",
        "deploy",
        "web",
        "--subresource=status",
        "--type=merge",
        "-p",
        '{"status":{"replicas":3}}',
      ]),
    ).toBe("deployment.apps/web patched\n");
    expect(await ok(["get", "deploy", "web", "-o", "jsonpath={.spec.replicas}/{.status.replicas}"])).toBe(
      "7/3",
    );
    expect(await ok(["patch", "deploy", "web", "--type=merge", "-p", '{"spec":{"replicas":7}}'])).toBe(
      "deployment.apps/web patched (no change)\n",
    );
  });

  it("edit with EDITOR set to a script", async () => {
    const editor = join(dir, "editor.sh");
    await writeFile(editor, "#!/bin/sh\nsed -i 's/mode: fast/mode: slow/' \"$1\"\n");
    await chmod(editor, 0o755);
    expect(await ok(["edit", "configmap", "settings"], { EDITOR: editor, KUBE_EDITOR: editor })).toBe(
      "configmap/settings edited\n",
    );
    expect(await ok(["get", "cm", "settings", "-o", "jsonpath={.data.mode}"])).toBe("slow");
  });

  it("delete waits until the object is gone", async () => {
    expect(await ok(["delete", "pod", "one"])).toBe('pod "one" deleted\n');
    expect(await ok(["delete", "configmap", "settings"])).toBe('configmap "settings" deleted\n');
    expect(await ok(["delete", "deployment", "web"])).toBe('deployment.apps "web" deleted\n');
    expect(await ok(["get", "pods", "-o", "name"])).toBe("");
  });

  it("create --dry-run=server writes nothing; logs of an unscheduled pod are empty (upstream's 204)", async () => {
    expect(await ok(["create", "configmap", "dry", "--from-literal=a=b", "--dry-run=server"])).toBe(
      "configmap/dry created (server dry run)\n",
    );
    expect((await kubectl(["get", "cm", "dry"])).err).toBe(
      'Error from server (NotFound): configmaps "dry" not found\n',
    );
    await ok(["run", "lonely", "--image=nginx"]);
    // LogLocation has no node to send it to: no stream, and kubectl prints nothing.
    expect(await kubectl(["logs", "lonely"])).toEqual({ out: "", err: "", code: 0 });
  });

  it("api-resources, api-versions, auth can-i", async () => {
    const resources = await ok(["api-resources"]);
    expect(resources).toMatch(/^NAME\s+SHORTNAMES\s+APIVERSION\s+NAMESPACED\s+KIND\n/);
    expect(resources).toMatch(/\npods\s+po\s+v1\s+true\s+Pod\n/);
    expect(resources).toMatch(/\ndeployments\s+deploy\s+apps\/v1\s+true\s+Deployment\n/);
    const versions = (await ok(["api-versions"])).trim().split("\n");
    expect(versions).toEqual(expect.arrayContaining(["v1", "apps/v1", "coordination.k8s.io/v1"]));
    expect(await ok(["auth", "can-i", "create", "pods"])).toBe("yes\n");
  });
  it("answers bad input as upstream does: wrong types, unknown fields (client- and server-side apply), an unknown kind", async () => {
    const manifest = (spec: string, name = "bad") =>
      `apiVersion: v1\nkind: Pod\nmetadata: {name: ${name}}\nspec:\n${spec}  containers: [{name: c, image: nginx}]\n`;
    const thirty = await kubectl(
      ["apply", "-f", "-"],
      {},
      manifest("  terminationGracePeriodSeconds: thirty\n"),
    );
    expect(thirty.code).not.toBe(0);
    expect(thirty.err).toBe(
      'Error from server (BadRequest): error when creating "STDIN": Pod in version "v1" cannot be handled as a Pod: json: cannot unmarshal string into Go struct field PodSpec.spec.terminationGracePeriodSeconds of type int64\n',
    );
    const unknown = await kubectl(["apply", "-f", "-"], {}, manifest("  foo: 1\n"));
    expect(unknown.err).toBe(
      'Error from server (BadRequest): error when creating "STDIN": Pod in version "v1" cannot be handled as a Pod: strict decoding error: unknown field "spec.foo"\n',
    );
    const ssa = await kubectl(["apply", "--server-side", "-f", "-"], {}, manifest("  foo: 1\n"));
    expect(ssa.err).toBe(
      "Error from server (BadRequest): failed to create typed patch object (default/bad; /v1, Kind=Pod): .spec.foo: field not declared in schema\n",
    );
    const widget = await kubectl(
      ["apply", "-f", "-"],
      {},
      "apiVersion: v1\nkind: Widget\nmetadata: {name: w}\n",
    );
    expect(widget.err).toBe(
      'error: resource mapping not found for name: "w" namespace: "" from "STDIN": no matches for kind "Widget" in version "v1"\nensure CRDs are installed first\n',
    );
    const affinity =
      "  affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchExpressions: [{key: disk, operator: In, values: [ssd]}]}]}}}\n  schedulingGates: [{name: example.com/gate}]\n";
    expect(await ok(["apply", "-f", "-"], {}, manifest(affinity, "gated"))).toBe("pod/gated created\n");
    expect(await ok(["get", "pod", "gated", "-o", "jsonpath={.spec.schedulingGates[0].name}"])).toBe(
      "example.com/gate",
    );
  });

  it("Node and Endpoints are typed: their fields are kept, a wrong type is refused, explain describes them", async () => {
    const node =
      "apiVersion: v1\nkind: Node\nmetadata: {name: typed-node}\nspec:\n  taints: [{key: dedicated, value: gpu, effect: NoSchedule}]\n";
    expect(await ok(["apply", "-f", "-"], {}, node)).toBe("node/typed-node created\n");
    expect(await ok(["get", "node", "typed-node", "-o", "jsonpath={.spec.taints[0].effect}"])).toBe(
      "NoSchedule",
    );
    const wrong = await kubectl(
      ["apply", "-f", "-"],
      {},
      node.replace("typed-node", "wrong-node").replace("[{key", "{key").replace("}]", "}"),
    );
    expect(wrong.err).toContain(
      "cannot unmarshal object into Go struct field NodeSpec.spec.taints of type []v1.Taint",
    );
    const endpoints =
      "apiVersion: v1\nkind: Endpoints\nmetadata: {name: web}\nsubsets: [{addresses: [{ip: 10.0.0.7, nodeName: n1}], ports: [{port: 8080, name: http}]}]\n";
    expect(await ok(["apply", "-f", "-"], {}, endpoints)).toBe("endpoints/web created\n");
    expect(await ok(["get", "endpoints", "web", "-o", "jsonpath={.subsets[0].addresses[0].nodeName}"])).toBe(
      "n1",
    );
    const explain = await ok(["explain", "node.spec.taints"]);
    expect(explain).toMatch(/effect\s+<string> -required-\n\s+NoSchedule, PreferNoSchedule or NoExecute/);
  });
});

async function waitFor(cond: () => boolean, ms = 10000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error("timed out waiting");
    await new Promise((r) => setTimeout(r, 50));
  }
}
