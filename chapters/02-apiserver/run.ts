/**
 * Chapter 2's demo — the API server at work, over real HTTP: how a pod reaches its kubelet (a
 * watch, filtered by spec.nodeName), resourceVersion as etcd's revision, optimistic concurrency,
 * patches, paged lists pinned to one revision, 410 Gone, reason Expired, and server-side printing.
 *
 * Solves: a learner who has read how the API server works should *see* each promise kept —
 * - a created object gets defaults, a uid and a resourceVersion, which is its key's mod_revision
 *   in etcd;
 * - the kubelet's watch (`fieldSelector=spec.nodeName=node-1`) is one chunked HTTP response of
 *   JSON lines; it says nothing while the pod is unscheduled and ADDED the moment the binding is
 *   written — an etcd update that entered the watcher's selection;
 * - an update with a stale resourceVersion is 409 Conflict; reading again and retrying wins;
 * - a strategic merge patch merges a pod's containers by name, a JSON merge patch replaces them;
 * - a paged list reads every page at the first page's revision; after compaction its continue
 *   token, and an exact list at an old revision, are 410 Gone, reason Expired;
 * - a watch from a resourceVersion older than the watch cache's window is an ERROR event
 *   carrying 410 Gone, reason Expired;
 * - `kubectl get` asks for a Table and the server prints the columns.
 *
 * Everything runs in this process: chapter 1's etcd, served over its gRPC API on a loopback port,
 * and the API server (code/apiserver/server.ts, `startAPIServer`) talking to it as
 * `kube-apiserver --etcd-servers` would. The demo talks to the API server only over HTTP, as a
 * kubelet or kubectl does; it reads etcd directly only to show what is stored there, and to
 * compact it as `etcdctl compact` would. Then it writes a kubeconfig and a pod manifest to
 * `.tmp/chapter-02/` (git-ignored; the same paths every run, so one `export KUBECONFIG=…` in
 * another terminal serves every run) and keeps serving kubectl until Ctrl-C. Ctrl-C, during the
 * tour or after it, stops both servers before the demo exits (a second Ctrl-C exits at once);
 * the two files stay, and everything the servers held, in memory, is gone.
 *
 * Usage: npm run chapter -- 2 [--once] [--port N]
 *   --once     exit after the tour instead of serving (also: CHAPTER_ONCE=1); tests use it
 *   --port N   serve the API on 127.0.0.1:N (default: a free port)
 *   CHAPTER_TMP=<dir>   write the kubeconfig and the manifest there instead of .tmp/chapter-02
 *
 * @upstream none — course demo
 * @chapter 02-apiserver
 */
import { existsSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import { request as httpRequest, type IncomingMessage } from "node:http";
import { join } from "node:path";
import { type APIServer, startAPIServer } from "../../code/apiserver/server.ts";
import { EmbedError, type Etcd, startEtcd } from "../../code/store/embed/etcd.ts";
import { toBytes, toText } from "../../code/store/pkg/bytes.ts";
import { EtcdError } from "../../code/store/rpctypes/error.ts";
import {
  answer,
  callJSON,
  cut,
  cyan,
  dim,
  green,
  heading,
  note,
  type Obj,
  type Reply,
  red,
  requestLog,
  runDemo,
  say,
  serveUntilInterrupt,
  servingDemo,
  sleep,
  statusLine,
  step,
  stopOnInterrupt,
  suggest,
  tryKubectl,
  yellow,
} from "../demo.ts";

/** The flags, and where the demo writes what kubectl needs (.tmp/chapter-02, or CHAPTER_TMP). */
const { once, port, workDir } = servingDemo(2, "the API");
const kubeconfigPath = join(workDir, "kubeconfig");
const podManifestPath = join(workDir, "my-pod.yaml");

// ─── HTTP: what a kubelet or kubectl sends ───────────────────────────────────────────────────

let api = "";

/** One request, the whole answer read; the body parsed as JSON, or the demo fails. */
async function call(method: string, path: string, body?: unknown, headers?: Record<string, string>) {
  const r = await callJSON(httpRequest, `${api}${path}`, { method, headers }, body);
  if (r.text !== undefined) throw new Error(`${method} ${path}: ${r.code}, not JSON: ${cut(r.text, 200)}`);
  return r;
}

/** A request that must succeed: its object, or the Status it got, thrown. */
async function must(method: string, path: string, body?: unknown, headers?: Record<string, string>) {
  const r = await call(method, path, body, headers);
  if (r.code >= 300) throw new Error(`${method} ${path} → ${statusLine({ ...r.body, code: r.code })}`);
  return r.body;
}

/** "409 Conflict: <message>", "410 Gone, reason Expired: <message>" — how an answer's Status is shown. */
function replyLine(r: Reply): string {
  return statusLine({ ...r.body, code: r.code });
}

/**
 * An open watch: one HTTP response that does not end; each line of its body is one event.
 * `next` waits (bounded) for the next line, `quiet` checks that none arrives for a while.
 */
class WatchStream {
  private lines: string[] = [];
  private partial = "";
  private wake?: () => void;
  ended = false;

  static open(path: string): Promise<{ res: IncomingMessage; stream: WatchStream; close: () => void }> {
    return new Promise((resolve, reject) => {
      const req = httpRequest(`${api}${path}`, { headers: { Accept: "application/json" } }, (res) => {
        const stream = new WatchStream();
        res.setEncoding("utf8");
        res.on("data", (d: string) => stream.push(d));
        res.on("end", () => {
          stream.ended = true;
          stream.wake?.();
        });
        res.on("error", () => {});
        resolve({ res, stream, close: () => req.destroy() });
      });
      req.on("error", reject);
      req.end();
    });
  }

  private push(chunk: string): void {
    const parts = (this.partial + chunk).split("\n");
    this.partial = parts.pop() ?? "";
    this.lines.push(...parts.filter((l) => l !== ""));
    this.wake?.();
  }

  /** The next raw line, or undefined if none arrives within `ms`. */
  async next(ms = 3000): Promise<string | undefined> {
    const deadline = Date.now() + ms;
    while (this.lines.length === 0 && !this.ended && Date.now() < deadline) {
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, deadline - Date.now());
        this.wake = () => {
          clearTimeout(t);
          resolve();
        };
      });
      this.wake = undefined;
    }
    return this.lines.shift();
  }

  /** Nothing arrived in `ms`? */
  async quiet(ms: number): Promise<boolean> {
    return (await this.next(ms)) === undefined;
  }
}

/** `ADDED pod demo/web rv=12 nodeName=node-1` — the parts of an event the demo talks about. */
function eventLine(line: string): string {
  const ev = JSON.parse(line) as { type: string; object: Obj };
  const o = ev.object;
  const colorOf = ev.type === "DELETED" || ev.type === "ERROR" ? red : ev.type === "ADDED" ? green : yellow;
  if (ev.type === "ERROR")
    return `${colorOf("ERROR")}    ${statusLine(o as { code?: number; reason?: string; message?: string })}`;
  const extra = [
    o.spec?.nodeName !== undefined ? `nodeName=${o.spec.nodeName || '""'}` : "",
    o.metadata.deletionTimestamp
      ? `deletionTimestamp set, grace ${o.metadata.deletionGracePeriodSeconds}s`
      : "",
  ].filter(Boolean);
  const kind = (o.kind ?? "").toLowerCase();
  return `${colorOf(ev.type.padEnd(8))} ${kind} ${o.metadata.namespace}/${o.metadata.name} rv=${o.metadata.resourceVersion} ${dim(extra.join(", "))}`;
}

// ─── the demo ────────────────────────────────────────────────────────────────────────────────

const ns = "demo";
const podsURL = `/api/v1/namespaces/${ns}/pods`;

function podManifest(name: string, containers = [{ name: "app", image: "nginx:1.27" }]): Obj {
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name, labels: { app: name } },
    spec: { containers },
  };
}

async function main(): Promise<void> {
  heading("The API server — chapter 2's REST server over chapter 1's etcd, over real HTTP");

  step("Start etcd and the API server");
  const etcd = await startEtcd({
    name: "default",
    dataDir: "",
    inMemory: true,
    listenClientURLs: ["http://127.0.0.1:0"],
    advertiseClientURLs: ["http://127.0.0.1:0"],
  });
  if (etcd instanceof EmbedError) throw new Error(`etcd did not start: ${etcd.message}`);
  let server: APIServer | undefined;
  const shutdown = async () => {
    await server?.close();
    await etcd.close();
    say("stopped the API server and etcd: every object was in memory, and is gone");
    say(`kept (git-ignored, for the next run): ${kubeconfigPath}, ${podManifestPath}`);
  };
  // From here on, Ctrl-C — during the tour or while serving kubectl — stops both servers first.
  stopOnInterrupt(shutdown);
  const etcdURL = `http://${etcd.clientAddresses[0]}`;
  say(`etcd (chapter 1's store) serving gRPC on ${cyan(etcdURL)}, in memory`);
  const requests = requestLog();
  // The watch cache's ring is pinned at its lower bound, 100 events, so that step 7 can outrun it
  // with 120 writes; by default it grows (up to 100 × 1024) to keep 75 s of history, as upstream's.
  server = await startAPIServer({
    etcdServers: [etcdURL],
    insecurePort: port,
    log: requests.log,
    watchCacheCapacity: 100,
  });
  api = server.url;
  say(`API server: ${cyan(server.url)}  ${dim(`(as kube-apiserver --etcd-servers=${etcdURL})`)}`);
  const version = await must("GET", "/version");
  say(`GET /version → gitVersion ${version.gitVersion} (major ${version.major}, minor ${version.minor})`);
  note("kubectl is supported against a server one minor version older or newer than itself;");
  note("`kubectl version` prints both versions and warns when they are further apart");

  try {
    await createAndStore(etcd);
    await kubeletWatch(etcd);
    await conflict();
    await patches();
    await lists(etcd);
    await watchTooOld();
    await table();
  } catch (e) {
    await server.close();
    await etcd.close();
    throw e;
  }

  await writeKubeconfig(server);
  await tryKubectl(kubeconfigPath, ["get", "pods"]);
  await serveUntilInterrupt(once, shutdown, requests);
}

async function createAndStore(etcd: Etcd): Promise<void> {
  step("Create a namespace and a pod: defaults, uid, and resourceVersion = etcd's mod_revision");
  const nsObj = await must("POST", "/api/v1/namespaces", {
    apiVersion: "v1",
    kind: "Namespace",
    metadata: { name: ns },
  });
  say(`POST /api/v1/namespaces → 201, namespace ${ns} rv=${nsObj.metadata.resourceVersion}`);
  const pod = await must("POST", podsURL, podManifest("web"));
  say(
    `POST ${podsURL} → 201, pod web uid=${pod.metadata.uid?.slice(0, 8)}… rv=${pod.metadata.resourceVersion}`,
  );
  note(
    `defaults the client did not send: restartPolicy=${pod.spec.restartPolicy}, ` +
      `terminationGracePeriodSeconds=${pod.spec.terminationGracePeriodSeconds}, ` +
      `schedulerName=${pod.spec.schedulerName}, phase=${pod.status?.phase}, qosClass=${pod.status?.qosClass}`,
  );
  const key = `/registry/pods/${ns}/web`;
  const stored = await etcd.server.range({ key: toBytes(key) });
  if (stored instanceof EtcdError) throw new Error(stored.message);
  const kv = stored.kvs[0];
  const value = JSON.parse(toText(kv.value)) as Obj;
  say(
    `etcd: ${key} mod_revision=${kv.modRevision} ${kv.modRevision === Number(pod.metadata.resourceVersion) ? green("= the pod's resourceVersion") : red("≠ the pod's resourceVersion")}`,
  );
  note(
    `the stored JSON has no resourceVersion (${value.metadata.resourceVersion === undefined ? "absent" : "present!"}): it is filled in from mod_revision on every read`,
  );
}

async function kubeletWatch(etcd: Etcd): Promise<void> {
  step("The kubelet's watch: how a pod reaches its node");
  // Exactly the kubelet's request: all namespaces, only pods bound to this node.
  const path = "/api/v1/pods?watch=true&fieldSelector=spec.nodeName%3Dnode-1&allowWatchBookmarks=true";
  const list = await must("GET", "/api/v1/pods?fieldSelector=spec.nodeName%3Dnode-1");
  say(
    `kubelet: GET /api/v1/pods?fieldSelector=spec.nodeName=node-1 → ${list.items.length} pods, rv=${list.metadata.resourceVersion}`,
  );
  const kubelet = await WatchStream.open(`${path}&resourceVersion=${list.metadata.resourceVersion}`);
  say(`kubelet: GET ${cut(path, 100)}&resourceVersion=${list.metadata.resourceVersion}`);
  say(
    `  → ${kubelet.res.statusCode}, Content-Type: ${kubelet.res.headers["content-type"]}, ` +
      `Transfer-Encoding: ${cyan(String(kubelet.res.headers["transfer-encoding"]))} ${dim("(headers sent at once; the body never ends)")}`,
  );
  const all = await WatchStream.open(`/api/v1/namespaces/${ns}/pods?watch=true&resourceVersion=0`);
  say(`a second watch, on every pod in ${ns}, from resourceVersion=0 (what the scheduler's informer sees)`);

  const scheduler = await all.stream.next();
  say(
    answer(
      `everything watch: ${scheduler ? eventLine(scheduler) : red("nothing")} ${dim("(rv=0: first the current state, as ADDED)")}`,
    ),
  );
  say(
    answer(
      `kubelet watch:    ${(await kubelet.stream.quiet(500)) ? dim("nothing for 500 ms — the pod web is not on node-1 (nodeName is empty)") : red("an event?!")}`,
    ),
  );

  const bound = await call("POST", `${podsURL}/web/binding`, {
    apiVersion: "v1",
    kind: "Binding",
    metadata: { name: "web" },
    target: { apiVersion: "v1", kind: "Node", name: "node-1" },
  });
  say(`scheduler: POST ${podsURL}/web/binding {target: node-1} → ${bound.code} ${bound.body.status}`);
  const line = await kubelet.stream.next();
  if (!line) throw new Error("the kubelet's watch received nothing after the binding");
  say(answer(`kubelet watch:    ${eventLine(line)}`));
  say(`   the raw chunk, one JSON line: ${dim(cut(line, 110))}`);
  const allBound = await all.stream.next();
  say(answer(`everything watch: ${allBound ? eventLine(allBound) : red("nothing")}`));
  note("for etcd this was an update; the kubelet's selector did not match the old pod and matches the");
  note("new one, so the watch turns the change into ADDED — the pod has just appeared on node-1");

  const rv = Number(JSON.parse(line).object.metadata.resourceVersion);
  const stored = await etcd.server.range({ key: toBytes(`/registry/pods/${ns}/web`) });
  if (!(stored instanceof EtcdError)) {
    note(
      `the event's resourceVersion ${rv} is the binding's etcd revision (mod_revision ${stored.kvs[0].modRevision})`,
    );
  }

  const del = await call("DELETE", `${podsURL}/web`);
  say(
    `kubectl delete pod web: DELETE ${podsURL}/web → ${del.code} (the pod is on a node: a graceful delete)`,
  );
  const marked = await kubelet.stream.next();
  say(answer(`kubelet watch:    ${marked ? eventLine(marked) : red("nothing")}`));
  const gone = await call("DELETE", `${podsURL}/web`, {
    apiVersion: "v1",
    kind: "DeleteOptions",
    gracePeriodSeconds: 0,
  });
  say(`kubelet, containers stopped: DELETE …/web {gracePeriodSeconds: 0} → ${gone.code}`);
  const deleted = await kubelet.stream.next();
  say(answer(`kubelet watch:    ${deleted ? eventLine(deleted) : red("nothing")}`));
  kubelet.close();
  all.close();
  note("no polling and no callback into the kubelet: the kubelet holds one request open, and the API");
  note("server writes an event into it whenever a write changes what that request selects");
}

async function conflict(): Promise<void> {
  step("Optimistic concurrency: a stale resourceVersion is 409 Conflict");
  await must("POST", podsURL, podManifest("db", [{ name: "app", image: "postgres:17" }]));
  const read = await must("GET", `${podsURL}/db`);
  const rv = read.metadata.resourceVersion;
  say(`two clients GET pod db, both at rv=${rv}`);
  const a = structuredClone(read);
  a.metadata.labels = { ...a.metadata.labels, tier: "backend" };
  const first = await call("PUT", `${podsURL}/db`, a);
  say(
    `client A: PUT db (rv=${rv}, +label tier) → ${green(String(first.code))}, rv=${first.body.metadata?.resourceVersion}`,
  );
  const b = structuredClone(read);
  b.metadata.labels = { ...b.metadata.labels, owner: "team-b" };
  const second = await call("PUT", `${podsURL}/db`, b);
  say(`client B: PUT db (rv=${rv}, +label owner) → ${red(replyLine(second))}`);
  const again = await must("GET", `${podsURL}/db`);
  again.metadata.labels = { ...again.metadata.labels, owner: "team-b" };
  const retried = await call("PUT", `${podsURL}/db`, again);
  say(
    `client B, retry: GET (rv=${again.metadata.resourceVersion}), relabel, PUT → ${green(String(retried.code))}, ` +
      `labels ${JSON.stringify(retried.body.metadata?.labels)}`,
  );
  note("neither change was lost: B's first write was refused rather than silently overwriting A's");
}

async function patches(): Promise<void> {
  step("Patches: a strategic merge patch merges containers by name; a merge patch replaces the list");
  const two = [
    { name: "app", image: "nginx:1.27" },
    { name: "sidecar", image: "busybox:1.36" },
  ];
  await must("POST", podsURL, podManifest("api", two));
  say(`pod api: containers ${two.map((c) => `${c.name}=${c.image}`).join(", ")}`);
  const patch = { spec: { containers: [{ name: "app", image: "nginx:1.28" }] } };
  say(`patch: ${JSON.stringify(patch)}`);
  const smp = await call("PATCH", `${podsURL}/api`, patch, {
    "Content-Type": "application/strategic-merge-patch+json",
  });
  const images = (o: Obj) => (o.spec?.containers ?? []).map((c: Obj) => `${c.name}=${c.image}`).join(", ");
  say(`as application/strategic-merge-patch+json → ${smp.code}: ${green(images(smp.body))}`);
  const merge = await call("PATCH", `${podsURL}/api`, patch, {
    "Content-Type": "application/merge-patch+json",
  });
  say(
    `as application/merge-patch+json → ${merge.code >= 300 ? red(cut(replyLine(merge), 150)) : yellow(images(merge.body))}`,
  );
  note("the merge patch replaced the whole list (dropping sidecar), which a pod's spec does not allow;");
  note("containers' patchMergeKey is name, so the strategic patch changed only the container app");
}

async function lists(etcd: Etcd): Promise<void> {
  step("Lists: limit and continue pin one revision; compaction expires them (410)");
  for (const name of ["cache", "queue"]) await must("POST", podsURL, podManifest(name));
  const page1 = await must("GET", `${podsURL}?limit=2`);
  const token = page1.metadata.continue as string;
  say(
    `GET ${podsURL}?limit=2 → ${page1.items.map((p: Obj) => p.metadata.name).join(", ")}; ` +
      `rv=${page1.metadata.resourceVersion}, remainingItemCount=${page1.metadata.remainingItemCount}`,
  );
  say(`  continue token decodes to ${cyan(Buffer.from(token, "base64url").toString())}`);
  const late = await must("POST", podsURL, podManifest("aaa-late"));
  say(`a pod created between pages: aaa-late, rv=${late.metadata.resourceVersion}`);
  const page2 = await must("GET", `${podsURL}?limit=1&continue=${token}`);
  const keep = page2.metadata.continue as string;
  say(
    `GET …?limit=1&continue=… → ${page2.items.map((p: Obj) => p.metadata.name).join(", ")}; ` +
      `rv=${page2.metadata.resourceVersion} ${dim("(the first page's revision: aaa-late is not in this list)")}`,
  );
  const rv0 = await must("GET", `${podsURL}?resourceVersion=0`);
  say(
    `GET ${podsURL}?resourceVersion=0 → ${rv0.items.length} pods at rv=${rv0.metadata.resourceVersion} ` +
      dim("(any recent state: answered from the watch cache's memory)"),
  );

  const pinned = page1.metadata.resourceVersion;
  const compactTo = Number(late.metadata.resourceVersion);
  const compacted = await etcd.server.compact({ revision: compactTo });
  if (compacted instanceof EtcdError) throw new Error(compacted.message);
  say(
    `etcd compact ${compactTo} ${dim("(what kube-apiserver's compactor does every 5 minutes; here at once, as etcdctl compact)")}`,
  );
  const exact = await call("GET", `${podsURL}?resourceVersion=${pinned}&resourceVersionMatch=Exact`);
  say(`GET …?resourceVersion=${pinned}&resourceVersionMatch=Exact → ${red(replyLine(exact))}`);
  if (keep) {
    const page3 = await call("GET", `${podsURL}?limit=1&continue=${keep}`);
    say(`GET …?limit=1&continue=<page 2's token, rv ${pinned}> → ${red(cut(replyLine(page3), 140))}`);
    const fresh = page3.body.metadata?.continue;
    if (fresh) {
      say(
        `  the 410 carries a fresh token: ${cyan(Buffer.from(fresh, "base64url").toString())} ${dim("(rv -1: at the newest revision)")}`,
      );
    }
  } else {
    note("page 2 was the last page: no token left to show the compacted continue");
  }
}

async function watchTooOld(): Promise<void> {
  step("Watch from a resourceVersion the watch cache no longer holds: 410 in the stream");
  const cm = await must("POST", `/api/v1/namespaces/${ns}/configmaps`, {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name: "counter" },
    data: { n: "0" },
  });
  const from = cm.metadata.resourceVersion;
  const writes = 120;
  for (let i = 1; i <= writes; i++) {
    await must(
      "PATCH",
      `/api/v1/namespaces/${ns}/configmaps/counter`,
      { data: { n: String(i) } },
      {
        "Content-Type": "application/merge-patch+json",
      },
    );
  }
  say(
    `configmap counter created at rv=${from}, then ${writes} updates ${dim("(this demo pins the watch cache at its last 100 events; by default it keeps 75 s)")}`,
  );

  const recent = await must("GET", `/api/v1/namespaces/${ns}/configmaps/counter`);
  const recentRV = Number(recent.metadata.resourceVersion) - 1;
  const ok = await WatchStream.open(
    `/api/v1/namespaces/${ns}/configmaps?watch=true&resourceVersion=${recentRV}`,
  );
  const replayed = await ok.stream.next();
  say(
    `watch from rv=${recentRV} → ${replayed ? eventLine(replayed) : red("nothing")} ${dim("(replayed from the ring)")}`,
  );
  ok.close();

  const old = await WatchStream.open(
    `/api/v1/namespaces/${ns}/configmaps?watch=true&resourceVersion=${from}`,
  );
  say(`watch from rv=${from} → HTTP ${old.res.statusCode}, then:`);
  const err = await old.stream.next();
  say(`  ${err ? eventLine(err) : red("nothing")}`);
  await sleep(50);
  say(`  and the response ends ${old.stream.ended ? green("(end of stream)") : yellow("(still open)")}`);
  old.close();
  note("a reflector that gets this lists again (a fresh resourceVersion) and watches from there");
}

async function table(): Promise<void> {
  step("Server-side printing: what kubectl get asks for");
  const accept = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json";
  const t = await must("GET", `${podsURL}?limit=500`, undefined, { Accept: accept });
  say(`GET ${podsURL}?limit=500, Accept: ${accept}`);
  say(`  → kind ${t.kind}, columns: ${t.columnDefinitions.map((c: Obj) => c.name).join(" ")}`);
  const widths = t.columnDefinitions
    .slice(0, 5)
    .map((c: Obj, i: number) =>
      Math.max(c.name.length, ...t.rows.map((r: Obj) => String(r.cells[i]).length)),
    );
  say(
    `  ${t.columnDefinitions
      .slice(0, 5)
      .map((c: Obj, i: number) => c.name.toUpperCase().padEnd(widths[i]))
      .join("   ")}`,
  );
  for (const r of t.rows) {
    say(
      `  ${r.cells
        .slice(0, 5)
        .map((c: unknown, i: number) => String(c).padEnd(widths[i]))
        .join("   ")}`,
    );
  }
  note("kubectl prints these cells as they come: it knows no pod columns of its own");
}

async function writeKubeconfig(server: APIServer): Promise<void> {
  step("Now with the real kubectl");
  await mkdir(workDir, { recursive: true });
  await writeFile(
    kubeconfigPath,
    [
      "apiVersion: v1",
      "kind: Config",
      "clusters:",
      "- name: course",
      "  cluster:",
      `    server: ${server.url}`,
      "contexts:",
      "- name: course",
      "  context:",
      "    cluster: course",
      "    user: course",
      `    namespace: ${ns}`,
      "current-context: course",
      "users:",
      "- name: course",
      "  user: {}",
      "",
    ].join("\n"),
  );
  say(`kubeconfig written to ${cyan(kubeconfigPath)} ${dim("(the same path every run; this run's port)")}`);
  // The learner's copy stays as they left it: they may be editing it between runs.
  if (existsSync(podManifestPath)) {
    say(`a pod manifest to apply: ${cyan(podManifestPath)} ${dim("(already there: kept as it is)")}`);
  } else {
    await writeFile(
      podManifestPath,
      [
        "# A pod to send with server-side apply (written by npm run chapter -- 2):",
        `#   kubectl apply --server-side -f ${podManifestPath}`,
        "# Change a field and apply it again: the server merges what you sent and records",
        "# you (kubectl) as the manager of those fields in metadata.managedFields.",
        "apiVersion: v1",
        "kind: Pod",
        "metadata:",
        "  name: my-pod",
        "  labels:",
        "    app: my-pod",
        "spec:",
        "  containers:",
        "  - name: app",
        "    image: nginx:1.27",
        "",
      ].join("\n"),
    );
    say(`a pod manifest to apply written to ${cyan(podManifestPath)}`);
  }
  say("in another terminal:");
  const commands: [string, string?][] = [
    [`export KUBECONFIG=${kubeconfigPath}`],
    ["kubectl get pods -o wide"],
    ["kubectl get pods -w", "a watch; leave it running"],
    ["kubectl run web2 --image=nginx", "in another terminal: the watch prints it"],
    ["kubectl get pods --field-selector spec.nodeName=node-1 -w", "the kubelet's view"],
    ["kubectl label pod db tier=frontend --overwrite --resource-version=1", "409 Conflict"],
    [`kubectl get --raw '/api/v1/namespaces/${ns}/pods?limit=1'`],
    ["kubectl api-resources"],
    ["kubectl explain pod.spec.containers"],
    [`kubectl apply --server-side -f ${podManifestPath}`],
    ["kubectl version", "the client's version and the server's"],
  ];
  suggest(commands);
}

runDemo(main);
