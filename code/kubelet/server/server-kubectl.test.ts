/**
 * The real kubectl 1.32 against a secured API server (Node,RBAC) and a kubelet server whose host
 * is a test double: log files written here in the CRI format, exec by spawning plain processes.
 * `kubectl logs` and `kubectl exec` go the whole way: kubectl → API server (authn, authz, pod,
 * node) → kubelet (client certificate, SubjectAccessReview) → log reader / process.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { appendFile, mkdir, mkdtemp, readdir, readFile, readlink, rm, writeFile } from "node:fs/promises";
import { request } from "node:https";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { Pod } from "../../api/core.ts";
import { type APIServer, startAPIServer } from "../../apiserver/server.ts";
import { runKubectl } from "../../apiserver/testing/kubectl-env.ts";
import { RESTClient } from "../../client/rest/client.ts";
import { buildConfigFromFlags } from "../../client/tools/clientcmd/client-config.ts";
import { ensurePKI, type PKILayout } from "../../pki/certs.ts";
import { PKIError } from "../../pki/errors.ts";
import { stopChild, track } from "../../testing/child-process.ts";
import { freePort } from "../../testing/ports.ts";
import { waitFor } from "../../testing/wait-for.ts";
import type { ExecProcess, ExecRequest, StreamingRuntime } from "../runtime/cri.ts";
import { newSubjectAccessReviewAuthorizer } from "./auth.ts";
import {
  type ContainerLocation,
  type KubeletServer,
  type KubeletServerHost,
  startKubeletServer,
} from "./server.ts";

/** The test double's container: its log files by restart, and whether it runs. */
interface FakeContainer {
  id: string;
  logs: string[]; // one path per restart, newest last
  running: boolean;
}

let dir: string;
let layout: PKILayout;
let apiserver: APIServer;
let kubelet: KubeletServer;
let env: NodeJS.ProcessEnv;
const pods: Pod[] = [];
const containers = new Map<string, FakeContainer>(); // "ns/pod/container"
const started: ChildProcess[] = [];

/** A StreamingRuntime that runs the command as a plain process on this machine. */
const processes: StreamingRuntime = {
  async Exec(req: ExecRequest): Promise<ExecProcess> {
    const [file, ...args] = req.cmd;
    if (!file) throw new Error("no command");
    const child = track(spawn(file, args, { stdio: ["pipe", "pipe", "pipe"] }));
    started.push(child);
    await new Promise<void>((resolve, reject) => {
      child.once("spawn", () => resolve());
      child.once("error", reject);
    });
    return {
      stdin: req.stdin ? child.stdin : null,
      stdout: child.stdout,
      stderr: child.stderr,
      resize: () => {},
      exited: new Promise((resolve) => child.once("close", (code) => resolve(code ?? 137))),
      kill: () => child.kill("SIGKILL"),
    };
  },
};

const host: KubeletServerHost = {
  getPods: () => pods,
  findContainer(namespace, podName, containerName, previous): ContainerLocation | { error: string } {
    const c = containers.get(`${namespace}/${podName}/${containerName}`);
    const path = c?.logs[c.logs.length - (previous ? 2 : 1)];
    if (!c || !path) {
      return {
        error: previous
          ? `previous terminated container "${containerName}" in pod "${podName}" not found`
          : `container "${containerName}" in pod "${podName}" is waiting to start: ContainerCreating`,
      };
    }
    return { containerId: c.id, logPath: path, running: previous ? false : c.running };
  },
  streaming: processes,
};

const kubectl = (args: string[], stdin?: string) => runKubectl(env, args, { stdin, timeoutMs: 60_000 });

function logLine(time: string, stream: "stdout" | "stderr", tag: "F" | "P", text: string): string {
  return `${time} ${stream} ${tag} ${text}\n`;
}

async function addContainer(
  ns: string,
  pod: string,
  name: string,
  restarts: string[][],
): Promise<FakeContainer> {
  const folder = join(dir, "pods-logs", `${ns}_${pod}_uid`, name);
  await mkdir(folder, { recursive: true });
  const logs: string[] = [];
  for (const [i, lines] of restarts.entries()) {
    const path = join(folder, `${i}.log`);
    await writeFile(path, lines.join(""));
    logs.push(path);
  }
  const c = { id: `${pod}-${name}-id`, logs, running: true };
  containers.set(`${ns}/${pod}/${name}`, c);
  return c;
}

function podObject(name: string, containerNames: string[], nodeName?: string): Pod {
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name, namespace: "default" },
    spec: {
      ...(nodeName ? { nodeName } : {}),
      containers: containerNames.map((c) => ({ name: c, image: "course/sleeper" })),
    },
  } as Pod;
}

async function createPod(pod: Pod): Promise<void> {
  const r = await kubectl(["create", "-f", "-"], JSON.stringify(pod));
  expect(r.err).toBe("");
  if (pod.spec && (pod.spec as { nodeName?: string }).nodeName) pods.push(pod);
}

async function createNode(name: string, port: number): Promise<void> {
  const node = { apiVersion: "v1", kind: "Node", metadata: { name } };
  expect((await kubectl(["create", "-f", "-"], JSON.stringify(node))).err).toBe("");
  const status = {
    status: {
      addresses: [
        { type: "InternalIP", address: "127.0.0.1" },
        { type: "Hostname", address: name },
      ],
      daemonEndpoints: { kubeletEndpoint: { Port: port } },
    },
  };
  const r = await kubectl([
    "patch",
    "node",
    name,
    "--subresource=status",
    "--type=merge",
    "-p",
    JSON.stringify(status),
  ]);
  expect(r.err).toBe("");
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "kubelet-server-"));
  const port = await freePort();
  const pki = await ensurePKI({
    dir: join(dir, "pki"),
    server: `https://127.0.0.1:${port}`,
    encryptionAlgorithm: "ECDSA-P256",
    nodes: ["node-1"],
  });
  if (pki instanceof PKIError) throw pki;
  layout = pki.layout;
  apiserver = await startAPIServer({
    securePort: port,
    secureServing: { tlsCertFile: layout.apiServerCert, tlsPrivateKeyFile: layout.apiServerKey },
    authentication: { clientCAFile: layout.caCert },
    authorizationModes: ["Node", "RBAC"],
    kubeletClient: {
      cert: await readFile(layout.apiServerKubeletClientCert, "utf8"),
      key: await readFile(layout.apiServerKubeletClientKey, "utf8"),
      // The nodes' Hostname addresses ("node-1") do not resolve on this machine.
      preferredAddressTypes: ["InternalIP"],
    },
  });
  const nodeKubeconfig = layout.identities.find((i) => i.id === "node-node-1")?.kubeconfig as string;
  env = {
    ...process.env,
    KUBECONFIG: layout.identities.find((i) => i.id === "admin")?.kubeconfig,
    KUBECACHEDIR: join(dir, "cache"),
    HOME: dir,
  };
  kubelet = await startKubeletServer({
    nodeName: "node-1",
    port: 0,
    host,
    clientCA: await readFile(layout.caCert, "utf8"),
    authorizer: newSubjectAccessReviewAuthorizer(
      new RESTClient(buildConfigFromFlags("", nodeKubeconfig), {
        group: "authorization.k8s.io",
        version: "v1",
      }),
    ),
    logStateCheckPeriodMs: 200,
  });
  await createNode("node-1", kubelet.port);
  // node-2's kubelet is down: its port is free and nothing listens on it.
  await createNode("node-2", await freePort());

  await createPod(podObject("web", ["web"], "node-1"));
  await addContainer("default", "web", "web", [
    [logLine("2024-05-01T10:00:00.000000001Z", "stdout", "F", "first life")],
    [
      logLine("2024-05-01T10:01:00.000000001Z", "stdout", "F", "hello"),
      logLine("2024-05-01T10:01:01.000000002Z", "stderr", "F", "a warning"),
      logLine("2024-05-01T10:01:02.000000003Z", "stdout", "P", "long "),
      logLine("2024-05-01T10:01:02.000000004Z", "stdout", "F", "line"),
    ],
  ]);
  await createPod(podObject("two", ["a", "b"], "node-1"));
  await addContainer("default", "two", "a", [[logLine("2024-05-01T10:00:00Z", "stdout", "F", "from a")]]);
  await addContainer("default", "two", "b", [[logLine("2024-05-01T10:00:00Z", "stdout", "F", "from b")]]);
  await createPod(podObject("ghost", ["web"], "node-1"));
  containers.set("default/ghost/web", { id: "ghost-id", logs: [join(dir, "gone.log")], running: true });
  await createPod(podObject("pending", ["web"]));
  await createPod(podObject("elsewhere", ["web"], "node-2"));
}, 120_000);

afterEach(async () => {
  await Promise.all(started.splice(0).map((c) => stopChild(c, 1000)));
});

afterAll(async () => {
  await Promise.all(started.splice(0).map((c) => stopChild(c, 1000)));
  await kubelet?.close();
  await apiserver?.close();
  await rm(dir, { recursive: true, force: true });
});

describe("kubectl logs through the API server and the kubelet", () => {
  it("prints the current container's log, both streams, partial chunks joined", async () => {
    const r = await kubectl(["logs", "web"]);
    expect(r).toMatchObject({ code: 0, out: "hello\na warning\nlong line\n" });
  });

  it("--tail, --timestamps, --limit-bytes and --since-time", async () => {
    expect((await kubectl(["logs", "web", "--tail=1"])).out).toBe("line\n");
    expect((await kubectl(["logs", "web", "--tail=2", "--timestamps"])).out).toBe(
      "2024-05-01T10:01:02.000000003Z long 2024-05-01T10:01:02.000000004Z line\n",
    );
    expect((await kubectl(["logs", "web", "--limit-bytes=8"])).out).toBe("hello\na ");
    expect((await kubectl(["logs", "web", "--since-time=2024-05-01T10:01:01Z"])).out).toBe(
      "a warning\nlong line\n",
    );
  });

  it("--previous reads the last terminated instance, and says so when there is none", async () => {
    expect(await kubectl(["logs", "web", "--previous"])).toMatchObject({ code: 0, out: "first life\n" });
    const r = await kubectl(["logs", "two", "-c", "a", "--previous"]);
    expect(r.code).toBe(1);
    expect(r.err.trim()).toBe(
      'Error from server (BadRequest): previous terminated container "a" in pod "two" not found',
    );
  });

  it("-c picks a container; a name not in the pod is upstream's 400", async () => {
    expect((await kubectl(["logs", "two", "-c", "b"])).out).toBe("from b\n");
    // kubectl checks the name against the pod first, in the API server's words.
    const r = await kubectl(["logs", "two", "-c", "nope"]);
    expect(r.err.trim()).toBe("error: container nope is not valid for pod two");
    const raw = await kubectl(["get", "--raw", "/api/v1/namespaces/default/pods/two/log?container=nope"]);
    expect(raw.err.trim()).toBe("Error from server (BadRequest): container nope is not valid for pod two");
  });

  it("a log file that cannot be opened is the kubelet's 400, passed on by the API server", async () => {
    const r = await kubectl(["logs", "ghost"]);
    const path = join(dir, "gone.log");
    expect(r.err.trim()).toBe(
      `Error from server (BadRequest): failed to open log file "${path}": open ${path}: no such file or directory`,
    );
  });

  it("the API demands a container name when the pod has several", async () => {
    const r = await kubectl(["get", "--raw", "/api/v1/namespaces/default/pods/two/log"]);
    expect(r.code).toBe(1);
    expect(r.err.trim()).toBe(
      "Error from server (BadRequest): a container name must be specified for pod two, choose one of: [a b]",
    );
  });

  it("validates the options as upstream does (422 PodLogOptions)", async () => {
    const r = await kubectl([
      "get",
      "--raw",
      "/api/v1/namespaces/default/pods/web/log?limitBytes=0&sinceSeconds=0",
    ]);
    expect(r.err.trim()).toBe(
      'The PodLogOptions "web" is invalid: \n* limitBytes: Invalid value: 0: must be greater than 0\n* sinceSeconds: Invalid value: 0: must be greater than 0',
    );
  });

  it("-f streams lines as they are written and ends when the container stops", async () => {
    const c = containers.get("default/web/web") as FakeContainer;
    const path = c.logs[c.logs.length - 1] as string;
    const follower = track(spawn("kubectl", ["logs", "-f", "web", "--tail=1"], { env }));
    started.push(follower);
    let out = "";
    follower.stdout.on("data", (d: Buffer) => {
      out += d.toString();
    });
    const exited = new Promise<number | null>((resolve) => follower.once("close", (code) => resolve(code)));
    await waitFor("the tail line", async () => out === "line\n");
    await appendFile(path, logLine("2024-05-01T10:02:00Z", "stdout", "F", "more"));
    await waitFor("the appended line", async () => out === "line\nmore\n");
    await appendFile(path, logLine("2024-05-01T10:02:01Z", "stdout", "F", "last"));
    c.running = false;
    try {
      expect(await exited).toBe(0);
      expect(out).toBe("line\nmore\nlast\n");
    } finally {
      c.running = true;
    }
  });

  // /proc/self/fd shows which files this process holds open: Linux only.
  it.runIf(process.platform === "linux")(
    "-f interrupted: kubectl going away ends the API server's request and the kubelet's reader",
    async () => {
      const c = containers.get("default/two/b") as FakeContainer;
      const path = c.logs[c.logs.length - 1] as string;
      const holdsLog = async () => {
        for (const fd of await readdir("/proc/self/fd")) {
          if ((await readlink(`/proc/self/fd/${fd}`).catch(() => "")) === path) return true;
        }
        return false;
      };
      const follower = track(spawn("kubectl", ["logs", "-f", "two", "-c", "b"], { env }));
      started.push(follower);
      let out = "";
      follower.stdout.on("data", (d: Buffer) => {
        out += d.toString();
      });
      await waitFor("the first line", async () => out === "from b\n");
      expect(await holdsLog()).toBe(true); // the kubelet's reader is following the file
      await stopChild(follower, 1000);
      await waitFor("the kubelet's reader to close the log file", async () => !(await holdsLog()));
    },
  );

  it("a missing pod is a 404; a pod without a node has no logs yet", async () => {
    const r = await kubectl(["logs", "nope"]); // kubectl gets the pod first
    expect(r.err.trim()).toBe(
      'error: error from server (NotFound): pods "nope" not found in namespace "default"',
    );
    const raw = await kubectl(["get", "--raw", "/api/v1/namespaces/default/pods/nope/log"]);
    expect(raw.err.trim()).toBe('Error from server (NotFound): pods "nope" not found');
    // No node, no stream: upstream's 204, which kubectl prints as nothing.
    expect(await kubectl(["logs", "pending"])).toEqual({ code: 0, out: "", err: "" });
  });

  it("a kubelet that cannot be reached is a 500 with the dial error", async () => {
    const node = JSON.parse((await kubectl(["get", "node", "node-2", "-o", "json"])).out);
    const port = node.status.daemonEndpoints.kubeletEndpoint.Port;
    const r = await kubectl(["logs", "elsewhere"]);
    expect(r.code).toBe(1);
    expect(r.err.trim()).toBe(
      `Error from server: Get "https://127.0.0.1:${port}/containerLogs/default/elsewhere/web": dial tcp 127.0.0.1:${port}: connect: connection refused`,
    );
  });
});

describe("kubectl exec over WebSocket through the API server and the kubelet", () => {
  it("runs a command: its stdout and stderr reach kubectl", async () => {
    const r = await kubectl(["exec", "web", "--", "sh", "-c", "echo out; echo err >&2"]);
    expect(r).toMatchObject({ code: 0, out: "out\n", err: "err\n" });
  });

  it("a non-zero exit code becomes kubectl's", async () => {
    const r = await kubectl(["exec", "web", "--", "sh", "-c", "echo before; exit 3"]);
    expect(r.out).toBe("before\n");
    expect(r.err.trim()).toBe("command terminated with exit code 3");
    expect(r.code).toBe(3);
  });

  it("-i sends stdin, and its end closes the command's stdin", async () => {
    const r = await kubectl(["exec", "-i", "web", "--", "sh", "-c", "tr a-z A-Z"], "hello\nworld\n");
    expect(r).toMatchObject({ code: 0, out: "HELLO\nWORLD\n" });
  });

  it("errors: no node, no container, kubelet down", async () => {
    expect((await kubectl(["exec", "pending", "--", "true"])).err.trim()).toBe(
      "Error from server (BadRequest): pod pending does not have a host assigned",
    );
    expect((await kubectl(["exec", "two", "-c", "nope", "--", "true"])).err.trim()).toBe(
      "Error from server (BadRequest): container nope is not valid for pod two",
    );
    const node = JSON.parse((await kubectl(["get", "node", "node-2", "-o", "json"])).out);
    const port = node.status.daemonEndpoints.kubeletEndpoint.Port;
    expect((await kubectl(["exec", "elsewhere", "--", "true"])).err.trim()).toBe(
      `Error from server: error dialing backend: dial tcp 127.0.0.1:${port}: connect: connection refused`,
    );
  });

  it("a container that is not running: the kubelet's refusal, as kubectl shows it upstream", async () => {
    const c = containers.get("default/two/a") as FakeContainer;
    c.running = false;
    try {
      const r = await kubectl(["exec", "two", "-c", "a", "--", "true"]);
      expect(r.code).toBe(1);
      expect(r.err.trim()).toBe('error: unable to upgrade connection: container not found ("a")');
    } finally {
      c.running = true;
    }
  });

  it("is authorized as `get pods/exec` (a WebSocket upgrade is a GET in 1.32)", async () => {
    const role = {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "Role",
      metadata: { name: "exec-get", namespace: "default" },
      rules: [
        { apiGroups: [""], resources: ["pods"], verbs: ["get"] },
        { apiGroups: [""], resources: ["pods/exec"], verbs: ["get"] },
      ],
    };
    expect((await kubectl(["create", "-f", "-"], JSON.stringify(role))).err).toBe("");
    expect(
      (await kubectl(["create", "rolebinding", "exec-get", "--role=exec-get", "--user=alice"])).err,
    ).toBe("");
    const asAlice = await kubectl(["exec", "web", "--as=alice", "--", "sh", "-c", "echo hi"]);
    expect(asAlice).toMatchObject({ code: 0, out: "hi\n" });
    const asBob = await kubectl(["exec", "web", "--as=bob", "--", "true"]);
    expect(asBob.err).toContain(
      'User "bob" cannot get resource "pods" in API group "" in the namespace "default"',
    );
  });
});

/** A GET to the kubelet with the given client certificate (or none). */
function kubeletGet(
  path: string,
  cert?: { cert: string; key: string },
): Promise<{ code: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(`${kubelet.url}${path}`, { rejectUnauthorized: false, ...(cert ?? {}) }, (res) => {
      let body = "";
      res.on("data", (d: Buffer) => {
        body += d.toString();
      });
      res.on("end", () => resolve({ code: res.statusCode ?? 0, body }));
    });
    req.on("error", reject);
    req.end();
  });
}

describe("the kubelet's own gates", () => {
  it("refuses a request without a client certificate (401)", async () => {
    expect(await kubeletGet("/healthz")).toEqual({ code: 401, body: "Unauthorized" });
  });

  it("asks the API server: a node may not proxy to itself, the API server's certificate may", async () => {
    const node = layout.identities.find((i) => i.id === "node-node-1");
    const nodeCert = {
      cert: await readFile(node?.cert as string, "utf8"),
      key: await readFile(node?.key as string, "utf8"),
    };
    expect(await kubeletGet("/pods", nodeCert)).toEqual({
      code: 403,
      body: "Forbidden (user=system:node:node-1, verb=get, resource=nodes, subresource(s)=[proxy])\n",
    });
    const apiserverCert = {
      cert: await readFile(layout.apiServerKubeletClientCert, "utf8"),
      key: await readFile(layout.apiServerKubeletClientKey, "utf8"),
    };
    expect(await kubeletGet("/healthz", apiserverCert)).toEqual({ code: 200, body: "ok" });
    const list = await kubeletGet("/pods", apiserverCert);
    expect(list.code).toBe(200);
    const podList = JSON.parse(list.body) as { kind: string; items: Pod[] };
    expect(podList.kind).toBe("PodList");
    expect(podList.items.map((p) => p.metadata.name).sort()).toEqual(["elsewhere", "ghost", "two", "web"]);
  });
});
