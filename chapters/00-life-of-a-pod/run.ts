/**
 * Chapter 0's tour — the life of a pod, a watch on the wire, and a check of the learner's setup.
 *
 * Solves: before any chapter zooms in on one component, a learner needs
 * - the whole path of a pod on one screen: who acts at each step, over which request or watch,
 *   and which chapter rebuilds that piece;
 * - to see, not be told, that "the API server tells the kubelet" is one long HTTP GET carrying
 *   many events — filtered on the server, resumable from a resourceVersion, and answered with
 *   410 Gone when the history it asks for is gone;
 * - to see label selectors (this chapter's exercise) pick objects, using the course's own
 *   code/api/labels.ts and code/api/label-selector-parser.ts;
 * - to learn which optional tools are missing before a chapter needs them.
 *
 * The watch demo is a deliberately tiny stand-in (one resource, an in-memory history) that speaks
 * the same wire format as kube-apiserver; chapter 2 builds the real handler over the real store.
 *
 * Usage: npm run chapter -- 0 [--setup]   (--setup: only the setup check)
 *
 * @upstream none — course tooling
 * @chapter 00-life-of-a-pod
 */
import { spawnSync } from "node:child_process";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { parse } from "../../code/api/label-selector-parser.ts";
import {
  type Labels,
  labelSelectorAsSelector,
  type Selector,
  selectorMatches,
  selectorToString,
} from "../../code/api/labels.ts";
import { boolFlag } from "../../code/cmd/cli/flag.ts";
import {
  answer,
  bold,
  cyan,
  demoFlags,
  dim,
  green,
  red,
  request,
  runDemo,
  sleep,
  statusLine,
  yellow,
} from "../demo.ts";

const flags = demoFlags("npm run chapter -- 0", { setup: boolFlag("only the setup check") });

const MIN_NODE_MAJOR = 20;

// #region tour

interface Step {
  who: string;
  what: string;
  wire: string;
  chapter: string;
}

/** The life of one pod, `default/web`, from `kubectl apply` to Ready. Revisions are illustrative. */
const steps: Step[] = [
  {
    who: "kubectl",
    what: "sends the new pod to the API server (apply on a new object: GET → 404, then POST)",
    wire: "POST /api/v1/namespaces/default/pods",
    chapter: "2",
  },
  {
    who: "kube-apiserver",
    what: "authenticates (who are you?), authorizes (RBAC: may you create pods?), runs mutating admission, validates, runs validating admission",
    wire: "in-process filters and plugins, before anything is stored",
    chapter: "3",
  },
  {
    who: "kube-apiserver → etcd",
    what: "writes the pod only if the key does not exist yet; etcd commits it at revision 1042",
    wire: "Txn If(mod_revision(/registry/pods/default/web) = 0) Then Put",
    chapter: "1",
  },
  {
    who: "kube-apiserver",
    what: "its own etcd watch delivers the write to the watch cache, which fans it out to every matching client watch",
    wire: "etcd Watch stream (gRPC) → watch cache → resourceVersion 1042",
    chapter: "1, 2",
  },
  {
    who: "kube-scheduler",
    what: "its pod informer gets ADDED for a pod with spec.nodeName empty and a schedulerName it serves, and puts it in the scheduling queue",
    wire: "GET /api/v1/pods?watch=true&fieldSelector=status.phase!=Succeeded,status.phase!=Failed",
    chapter: "4, 5",
  },
  {
    who: "kube-scheduler",
    what: "pops the pod: Filter drops nodes that cannot run it, Score ranks the rest, the best node wins (node-1)",
    wire: "no request: works on a snapshot of its informer cache",
    chapter: "5",
  },
  {
    who: "kube-scheduler",
    what: "binds: asks the API server to set spec.nodeName = node-1 (etcd revision 1043)",
    wire: "POST /api/v1/namespaces/default/pods/web/binding",
    chapter: "5",
  },
  {
    who: "kubelet on node-1",
    what: "its pod watch, filtered on the server by spec.nodeName, now matches the pod: it arrives as ADDED",
    wire: "GET /api/v1/pods?watch=true&fieldSelector=spec.nodeName=node-1",
    chapter: "7",
  },
  {
    who: "kubelet",
    what: "syncLoop hands the pod to its pod worker; the runtime starts the containers",
    wire: "container runtime (CRI upstream; child processes here)",
    chapter: "7",
  },
  {
    who: "kubelet",
    what: "starts the startup, liveness and readiness probes; reports phase Running, then Ready=True",
    wire: "PATCH /api/v1/namespaces/default/pods/web/status",
    chapter: "7",
  },
  {
    who: "every watcher",
    what: "kubectl get -w, the ReplicaSet controller, the endpoints controllers see MODIFIED web",
    wire: "their own open watches; nobody is called back",
    chapter: "4, 8",
  },
];

function printTour(): void {
  console.log(bold("The life of a pod — kubectl apply -f web.yaml, until the pod is Ready\n"));
  steps.forEach((s, i) => {
    const n = String(i + 1).padStart(2);
    console.log(`${bold(n)}. ${cyan(s.who)} ${dim(`(chapter ${s.chapter})`)}`);
    console.log(`    ${s.what}`);
    console.log(`    ${dim(s.wire)}`);
  });
  console.log(
    `\n${bold("The answer to the question:")} the kubelet is neither polled nor called back. It keeps ONE watch\n` +
      "open — a long-running GET — and the API server writes an event into it the moment etcd commits a\n" +
      "change that matches the kubelet's field selector.\n",
  );
}

// #endregion tour

// #region watch-on-the-wire

interface PodEvent {
  rv: number;
  type: "PUT" | "DELETE";
  pod: { name: string; nodeName: string; phase: string; ready: boolean };
}

/**
 * A miniature of the API server's watch over ONE resource, with an in-memory history.
 *
 * Invariants: `history` is ordered by rv; every event at or below `compacted` is gone, so a watch
 * from a resourceVersion below it gets 410 Gone, as upstream does.
 */
class MiniWatchServer {
  history: PodEvent[] = [];
  compacted = 0;
  private rv = 1040;
  private watchers = new Set<(e: PodEvent) => void>();

  write(pod: PodEvent["pod"]): number {
    const e: PodEvent = { rv: ++this.rv, type: "PUT", pod: { ...pod } };
    this.history.push(e);
    for (const w of this.watchers) w(e);
    return e.rv;
  }

  handle(req: IncomingMessage, res: ServerResponse): void {
    const url = new URL(req.url ?? "/", "http://localhost");
    const node = /^spec\.nodeName=(.*)$/.exec(url.searchParams.get("fieldSelector") ?? "")?.[1];
    const from = Number(url.searchParams.get("resourceVersion") ?? "0");
    if (url.pathname !== "/api/v1/pods" || url.searchParams.get("watch") !== "true" || node === undefined) {
      res
        .writeHead(400)
        .end("this miniature serves only GET /api/v1/pods?watch=true&fieldSelector=spec.nodeName=…\n");
      return;
    }
    // No Content-Length: Node's http module then sends `Transfer-Encoding: chunked`, and each write
    // below leaves as its own chunk — the response never "completes" while the watch is open.
    res.writeHead(200, { "Content-Type": "application/json" });
    if (from < this.compacted) {
      // Upstream answers an expired resourceVersion with 200 and ONE error event, not with an HTTP 410.
      const status = {
        kind: "Status",
        apiVersion: "v1",
        status: "Failure",
        message: `too old resource version: ${from} (${this.compacted})`,
        reason: "Expired",
        code: 410,
      };
      res.end(`${JSON.stringify({ type: "ERROR", object: status })}\n`);
      return;
    }
    // The previous state of each pod decides ADDED / MODIFIED / DELETED *as seen through the selector*.
    const last = new Map<string, PodEvent["pod"]>();
    for (const e of this.history) if (e.rv <= from) last.set(e.pod.name, e.pod);
    const send = (e: PodEvent) => {
      const before = last.get(e.pod.name);
      last.set(e.pod.name, e.pod);
      const was = before?.nodeName === node;
      const is = e.pod.nodeName === node;
      if (!was && !is) return; // not this watcher's business: filtered on the server
      const type = is ? (was ? "MODIFIED" : "ADDED") : "DELETED";
      const obj = {
        kind: "Pod",
        apiVersion: "v1",
        metadata: { name: e.pod.name, namespace: "default", resourceVersion: String(e.rv) },
        spec: { nodeName: e.pod.nodeName },
        status: {
          phase: e.pod.phase,
          conditions: [{ type: "Ready", status: e.pod.ready ? "True" : "False" }],
        },
      };
      res.write(`${JSON.stringify({ type, object: obj })}\n`);
    };
    for (const e of this.history) if (e.rv > from) send(e); // catch up from the requested revision
    this.watchers.add(send);
    res.on("close", () => this.watchers.delete(send));
  }
}

/**
 * Reads a watch response line by line until `stopAfter` events (or 3 s) have passed, then closes it.
 * Returns the resourceVersion of the last object seen — the client's resume point.
 */
async function consume(url: string, stopAfter: number): Promise<string> {
  const t0 = performance.now();
  const abort = new AbortController();
  const guard = setTimeout(() => abort.abort(), 3_000); // a demo must never hang on a missed event
  let lastRV = "";
  try {
    const res = await fetch(url, { signal: abort.signal });
    const te = res.headers.get("transfer-encoding") ?? "(none)";
    console.log(
      dim(
        `    ${answer(`${res.status} ${res.statusText}, Content-Type: ${res.headers.get("content-type")}, Transfer-Encoding: ${te}`)}`,
      ),
    );
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    let buffered = "";
    let seen = 0;
    while (seen < stopAfter) {
      const { value, done } = await reader.read();
      if (done) break;
      buffered += decoder.decode(value, { stream: true });
      for (let nl = buffered.indexOf("\n"); nl >= 0 && seen < stopAfter; nl = buffered.indexOf("\n")) {
        const event = JSON.parse(buffered.slice(0, nl)) as WatchLine;
        buffered = buffered.slice(nl + 1);
        seen++;
        lastRV = printEvent(event, performance.now() - t0) ?? lastRV;
      }
    }
    await reader.cancel(); // closes the connection: the server drops this watcher
  } catch (err) {
    if (!abort.signal.aborted) throw err;
    console.log(yellow(`    (no more events within 3 s; closing the watch)`));
  } finally {
    clearTimeout(guard);
  }
  return lastRV;
}

interface WatchLine {
  type: string;
  object: {
    metadata?: { name: string; resourceVersion: string };
    spec?: { nodeName: string };
    status?: { phase: string; conditions: { status: string }[] };
    code?: number;
    reason?: string;
    message?: string;
  };
}

/** Prints one event; returns its object's resourceVersion (undefined for an ERROR event). */
function printEvent(e: WatchLine, ms: number): string | undefined {
  const at = dim(`+${String(Math.round(ms)).padStart(3)} ms`);
  const o = e.object;
  if (e.type === "ERROR") {
    console.log(`    ${at} ${red("ERROR   ")} ${statusLine(o)}`);
    return undefined;
  }
  const rv = o.metadata!.resourceVersion;
  console.log(
    `    ${at} ${yellow(e.type.padEnd(8))} ${o.metadata!.name}  rv=${rv}  nodeName=${o.spec!.nodeName}  ` +
      `phase=${o.status!.phase}  Ready=${o.status!.conditions[0].status}`,
  );
  return rv;
}

async function demoWatch(): Promise<void> {
  console.log(
    bold("A watch on the wire") +
      dim("  (a small stand-in for kube-apiserver; chapter 2 builds the real one)\n"),
  );
  const api = new MiniWatchServer();
  const server = createServer((req, res) => api.handle(req, res));
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const watchPath = (rv: string | number) =>
    `/api/v1/pods?watch=true&fieldSelector=spec.nodeName=node-1&resourceVersion=${rv}`;
  try {
    api.write({ name: "db", nodeName: "", phase: "Pending", ready: false });
    const created = api.write({ name: "web", nodeName: "", phase: "Pending", ready: false }); // kubectl apply
    console.log(`  The kubelet on node-1 opens ONE request and keeps reading it:`);
    console.log(`    ${request(`GET ${watchPath(created)}`)}`);
    const watching = consume(base + watchPath(created), 2);
    await sleep(50);
    api.write({ name: "web", nodeName: "node-1", phase: "Pending", ready: false }); // the scheduler binds web
    await sleep(50);
    api.write({ name: "db", nodeName: "node-2", phase: "Pending", ready: false }); // db goes elsewhere
    await sleep(50);
    api.write({ name: "web", nodeName: "node-1", phase: "Running", ready: false }); // kubelet's status PATCH
    const lastRV = await watching;
    console.log(dim(`    (db was bound to node-2 in between; the server never sent it to node-1)`));

    api.write({ name: "web", nodeName: "node-1", phase: "Running", ready: true }); // readiness probe passed
    console.log(
      `\n  The connection drops, and a change lands meanwhile. The kubelet resumes from the last rv it saw:`,
    );
    console.log(`    ${request(`GET ${watchPath(lastRV)}`)}`);
    await consume(base + watchPath(lastRV), 1);

    api.compacted = Number(lastRV); // the history up to here is compacted away
    console.log(`\n  After compaction, a client asking for history the server no longer has is told so:`);
    console.log(`    ${request(`GET ${watchPath(created)}`)}`);
    await consume(base + watchPath(created), 1);
    console.log(
      dim(`    → the client must LIST again (current state + its resourceVersion), then watch from there.\n`),
    );
  } finally {
    server.closeAllConnections();
    server.close();
  }
}

// #endregion watch-on-the-wire

// #region label-selectors

const pods: { name: string; labels: Labels; note?: string }[] = [
  { name: "web-1", labels: { app: "web", env: "prod", tier: "frontend" } },
  { name: "web-2", labels: { app: "web", env: "staging" }, note: "no tier label at all: tier!=db holds" },
  { name: "web-3", labels: { app: "web", env: "prod", canary: "true" }, note: "!canary fails" },
  { name: "db-0", labels: { app: "web", env: "prod", tier: "db" }, note: "tier!=db fails" },
  { name: "web-dev", labels: { app: "web", env: "dev" }, note: "env in (prod,staging) fails" },
];

const formatLabels = (labels: Labels) =>
  Object.entries(labels)
    .map(([k, v]) => `${k}=${v}`)
    .join(",");

function demoLabelSelectors(): void {
  console.log(
    bold("Label selectors") +
      dim(
        "  (this chapter's exercise; the course's version is code/api/labels.ts and label-selector-parser.ts)\n",
      ),
  );
  const text = "app=web,tier!=db,env in (prod,staging),!canary";
  console.log(`  kubectl get pods -l '${text}'`);
  const parsed = parse(text);
  if (!parsed.ok) throw parsed.error;
  console.log(dim(`  parsed; canonical form: ${selectorToString(parsed.value)}\n`));
  for (const pod of pods) {
    const hit = selectorMatches(parsed.value, pod.labels);
    const mark = hit ? green("✓") : red("✗");
    const labels = formatLabels(pod.labels);
    const shown = pod.note ? `${labels.padEnd(34)}${dim(`← ${pod.note}`)}` : labels;
    console.log(`    ${mark} ${pod.name.padEnd(8)} ${shown}`);
  }

  // The structured form a ReplicaSet or Deployment carries in spec.selector.
  const structured = labelSelectorAsSelector({
    matchLabels: { app: "web" },
    matchExpressions: [
      { key: "tier", operator: "NotIn", values: ["db"] },
      { key: "env", operator: "In", values: ["prod", "staging"] },
      { key: "canary", operator: "DoesNotExist" },
    ],
  });
  if (!structured.ok) throw structured.error;
  const same = (a: Selector, b: Selector) =>
    pods.every((p) => selectorMatches(a, p.labels) === selectorMatches(b, p.labels));
  console.log(`\n  The same selector as a ReplicaSet's spec.selector (matchLabels + matchExpressions):`);
  console.log(
    `    ${selectorToString(structured.value)}  ${dim(`— picks the same pods: ${same(parsed.value, structured.value) ? "yes" : "no"}`)}`,
  );

  const typo = "env in prod";
  const bad = parse(typo);
  console.log(`\n  A mistake is an error value whose message is upstream's, word for word:`);
  console.log(`    '${typo}' → ${bad.ok ? "(parsed?)" : red(bad.error.message)}\n`);
}

// #endregion label-selectors

// #region setup-check

interface Tool {
  name: string;
  command: string;
  args: string[];
  adds: string;
  install: string;
  /** A note about the version found, or undefined when it is what the course expects. */
  check?: (version: string) => string | undefined;
}

const aptInstall = "sudo apt-get install -y etcd-server etcd-client chromium";

const tools: Tool[] = [
  {
    name: "kubectl",
    command: "kubectl",
    args: ["version", "--client"],
    adds: "drives the miniature API server from chapter 2 on, and the whole cluster in chapter 8",
    install: "v1.32 from the Kubernetes docs: https://kubernetes.io/docs/tasks/tools/",
    check: (v) => {
      const m = /v1\.(\d+)\./.exec(v);
      if (!m) return "could not read the version; the course expects v1.32";
      return m[1] === "32"
        ? undefined
        : `the course expects v1.32 (kubectl supports one minor version of skew)`;
    },
  },
  {
    name: "etcd",
    command: "etcd",
    args: ["--version"],
    adds: "the real etcd to compare the miniature with: run the same etcdctl commands against both (chapter 1)",
    install: aptInstall,
  },
  {
    name: "etcdctl",
    // etcdctl has no --version flag; `etcdctl version` prints the client and API versions.
    command: "etcdctl",
    args: ["version"],
    adds: "drives the miniature's etcd API and the real etcd with the same commands (chapter 1)",
    install: aptInstall,
  },
  {
    name: "chromium",
    command: "chromium",
    args: ["--version"],
    adds: "the site test (part of npm test) loads the course's pages in headless Chromium",
    install: aptInstall,
  },
];

function firstLine(text: string): string {
  return (
    text
      .split("\n")
      .map((l) => l.trim())
      .find((l) => l.length > 0) ?? ""
  );
}

/** Runs `<tool> --version` (or its equivalent); `found: false` when the binary is not on PATH. */
function probe(tool: Tool): { found: boolean; version: string } {
  const r = spawnSync(tool.command, tool.args, { encoding: "utf8", timeout: 10_000 });
  if (r.error && (r.error as NodeJS.ErrnoException).code === "ENOENT") return { found: false, version: "" };
  // Prefer stdout: some wrapper scripts (Debian's chromium) print noise on stderr.
  const version = firstLine(r.stdout ?? "") || firstLine(r.stderr ?? "") || "(no version printed)";
  return { found: true, version };
}

function nodeMajor(): number {
  return Number(process.versions.node.split(".")[0]);
}

function checkNode(): boolean {
  const ok = nodeMajor() >= MIN_NODE_MAJOR;
  if (!ok) {
    console.error(
      red(`✗ Node ${process.version} is too old: the course needs Node ${MIN_NODE_MAJOR} or newer.`) +
        ` Fix: install Node ${MIN_NODE_MAJOR}+ (https://nodejs.org, or \`nvm install ${MIN_NODE_MAJOR}\`), then \`npm ci\`.`,
    );
  }
  return ok;
}

function checkSetup(): void {
  console.log(bold("Your setup\n"));
  console.log(
    `  ${green("✓")} ${"node".padEnd(9)} ${process.version} ${dim(`(required: ${MIN_NODE_MAJOR} or newer)`)}`,
  );
  const missing: Tool[] = [];
  for (const tool of tools) {
    const { found, version } = probe(tool);
    if (!found) {
      missing.push(tool);
      console.log(`  ${yellow("–")} ${tool.name.padEnd(9)} ${yellow("not found")} ${dim("(optional)")}`);
      console.log(`      ${dim(`adds: ${tool.adds}`)}`);
      console.log(`      ${dim(`install: ${tool.install}`)}`);
      continue;
    }
    const note = tool.check?.(version);
    console.log(`  ${note ? yellow("!") : green("✓")} ${tool.name.padEnd(9)} ${version}`);
    if (note) console.log(`      ${yellow(note)}`);
  }
  console.log("");
  if (missing.length === 0) console.log(green("Everything is in place, optional tools included."));
  else {
    console.log(
      `The course runs without the optional tools; each one adds checks. Missing: ${missing.map((t) => t.name).join(", ")}.`,
    );
  }
  console.log(
    `\nNext: solve exercise 0.1 — ${bold("npm run grade -- label-selectors")} (hints: npm run hint -- label-selectors)`,
  );
}

// #endregion setup-check

async function main(): Promise<number> {
  if (!checkNode()) return 1;
  if (!flags.setup) {
    printTour();
    await demoWatch();
    demoLabelSelectors();
  }
  checkSetup();
  return 0;
}

runDemo(main);
