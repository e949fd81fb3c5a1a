/**
 * HAControlPlane — the fault tests' cluster: kube-apiserver as its own process (on disk, so it
 * can be killed and restarted on the same port with its objects), and kube-scheduler candidates,
 * each behind its own FaultProxy and with its own credential, so that the API server's audit log
 * says which process made every write.
 * No upstream counterpart: upstream's leader-election tests run in one process against fakes.
 *
 * Solves:
 * - "which scheduler bound this pod?" must be answered by the API server, not by the schedulers'
 *   own logs (a stale leader is exactly the process whose view is wrong). Every scheduler process
 *   gets its own bearer token from `--token-auth-file`: user `system:kube-scheduler` as upstream's,
 *   a uid of its own (`sched-<n>`, a fresh one per process, restarts included), and the audit log
 *   records that uid on each Lease write and binding — as distinct client certificates would;
 * - faults of every kind on one candidate at a time: `kill -9` (and a restart), SIGSTOP/SIGCONT,
 *   a partition of its proxy; and of the API server itself (stopped, then started again on the
 *   same port with the same `--data-dir`, so the Lease and the pods survive);
 * - nothing outlives a test: `close()` kills every process and proxy it ever started, whatever
 *   state they were left in (SIGKILL ends a SIGSTOPped process too; the SIGCONT after it is only
 *   belt and braces).
 *
 * Invariants:
 * - `audit()` is every ResponseComplete event of every API server incarnation, in the order
 *   they were logged (incarnations one after the other);
 * - the token of uid `sched-<n>` is given to one process only.
 *
 * @upstream none — test harness
 * @chapter 06-leader-election
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Event as AuditEvent } from "../../apiserver/audit/event.ts";
import { type Clientset, newForConfig } from "../../client/kubernetes/clientset.ts";
import { FaultProxy } from "../../testing/fault-proxy.ts";
import { freePort } from "../../testing/ports.ts";
import { waitFor } from "../../testing/wait-for.ts";
import { type CommandProcess, startCommand } from "./command-process.ts";

const apiserverFile = new URL("../kube-apiserver.ts", import.meta.url).pathname;
const schedulerFile = new URL("../kube-scheduler.ts", import.meta.url).pathname;

/** How many scheduler credentials the token file holds (one per process started). */
const maxSchedulerProcesses = 500;
const adminToken = "admin-token";

/**
 * What the audit log keeps: Lease writes with their bodies (the holder each write names), and
 * bindings at Metadata (who bound which pod); reads and everything else are not logged.
 */
const auditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
- level: Request
  verbs: [create, update, patch, delete]
  resources: [{group: coordination.k8s.io, resources: [leases]}]
- level: Metadata
  verbs: [create]
  resources: [{group: "", resources: [pods/binding]}]
- level: None
`;

/** One kube-scheduler process: its proxy, its audit uid, the identity it logged. */
export interface SchedulerProcess {
  /** The candidate slot (its proxy is reused when the slot is restarted). */
  slot: number;
  uid: string;
  identity: string;
  process: CommandProcess;
  proxy: FaultProxy;
}

export interface HAOptions {
  /** `--leader-elect-*` durations in ms. */
  durations: { lease: number; renew: number; retry: number };
  /** The Lease (kube-system/<name>) this test's schedulers elect on. */
  leaseName: string;
}

export class HAControlPlane {
  readonly client: Clientset;
  /** Scheduler processes, in start order (exited ones too). */
  readonly schedulers: SchedulerProcess[] = [];
  private readonly proxies: FaultProxy[] = [];
  private readonly incarnations: CommandProcess[] = [];
  private nextUid = 0;

  private constructor(
    readonly dir: string,
    readonly port: number,
    readonly options: HAOptions,
  ) {
    this.client = newForConfig({
      host: `https://127.0.0.1:${port}`,
      bearerToken: adminToken,
      tlsClientConfig: { insecure: true },
    });
  }

  /** Writes the token file and audit policy into a fresh folder and starts the API server. */
  static async start(options: HAOptions): Promise<HAControlPlane> {
    const dir = await mkdtemp(join(tmpdir(), "ha-control-plane-"));
    const tokens = [`${adminToken},admin,admin,system:masters`];
    for (let i = 0; i < maxSchedulerProcesses; i++)
      tokens.push(`sched-token-${i},system:kube-scheduler,sched-${i}`);
    await writeFile(join(dir, "tokens.csv"), `${tokens.join("\n")}\n`);
    await writeFile(join(dir, "audit.yaml"), auditPolicy);
    const cp = new HAControlPlane(dir, await freePort(), options);
    try {
      await cp.startAPIServer();
    } catch (e) {
      await cp.close();
      throw e;
    }
    return cp;
  }

  /** The API server's process now (the last incarnation). */
  get apiserver(): CommandProcess {
    const p = this.incarnations.at(-1);
    if (!p) throw new Error("the API server was never started");
    return p;
  }

  /** Starts kube-apiserver on `port` with the data dir; resolves once it serves. */
  async startAPIServer(): Promise<void> {
    const p = startCommand(apiserverFile, [
      `--secure-port=${this.port}`,
      "--bind-address=127.0.0.1",
      `--cert-dir=${join(this.dir, "certs")}`,
      `--data-dir=${join(this.dir, "data")}`,
      `--token-auth-file=${join(this.dir, "tokens.csv")}`,
      `--audit-policy-file=${join(this.dir, "audit.yaml")}`,
      "--audit-log-path=-",
      "--v=0",
    ]);
    this.incarnations.push(p);
    await p.waitForStderr("Serving securely on", 60_000);
  }

  /** kill -9 of the API server; resolves once it has exited. */
  async killAPIServer(): Promise<void> {
    const p = this.apiserver;
    p.kill();
    await p.waitForExit();
  }

  /** Every ResponseComplete audit event so far, in log order, across restarts. */
  audit(): AuditEvent[] {
    const out: AuditEvent[] = [];
    for (const p of this.incarnations)
      for (const line of p.stdout().split("\n")) {
        if (!line.startsWith("{")) continue;
        try {
          out.push(JSON.parse(line) as AuditEvent);
        } catch {
          // the last line of a killed server may be cut short
        }
      }
    return out;
  }

  /** Starts a scheduler in `slot` (a new proxy for a new slot); resolves once it is a synced candidate. */
  async startScheduler(slot: number): Promise<SchedulerProcess> {
    this.proxies[slot] ??= await FaultProxy.start(`127.0.0.1:${this.port}`);
    const proxy = this.proxies[slot];
    const n = this.nextUid++;
    const kubeconfig = join(this.dir, `sched-${n}.kubeconfig`);
    await writeFile(
      kubeconfig,
      [
        "apiVersion: v1",
        "kind: Config",
        `clusters: [{name: c, cluster: {server: "https://${proxy.address}", insecure-skip-tls-verify: true}}]`,
        `users: [{name: u, user: {token: sched-token-${n}}}]`,
        "contexts: [{name: c, context: {cluster: c, user: u}}]",
        "current-context: c",
        "",
      ].join("\n"),
    );
    const { lease, renew, retry } = this.options.durations;
    const process = startCommand(schedulerFile, [
      `--kubeconfig=${kubeconfig}`,
      "--secure-port=0",
      `--leader-elect-lease-duration=${lease}ms`,
      `--leader-elect-renew-deadline=${renew}ms`,
      `--leader-elect-retry-period=${retry}ms`,
      `--leader-elect-resource-name=${this.options.leaseName}`,
    ]);
    const s: SchedulerProcess = { slot, uid: `sched-${n}`, identity: "", process, proxy };
    this.schedulers.push(s);
    await process.waitForStderr('"Leader election candidate"', 60_000);
    s.identity = /"Leader election candidate" identity="([^"]+)"/.exec(process.stderr())?.[1] ?? "";
    return s;
  }

  /** The scheduler processes still running (not exited), by slot. */
  running(): SchedulerProcess[] {
    return this.schedulers.filter(
      (s) => s.process.child.exitCode === null && s.process.child.signalCode === null,
    );
  }

  /** The Lease's holder identity ("" if none or no Lease). */
  async holder(): Promise<string> {
    try {
      const l = await this.client.coordinationV1.leases("kube-system").get(this.options.leaseName);
      return l.spec?.holderIdentity ?? "";
    } catch {
      return "";
    }
  }

  /** Creates `n` pods named `<prefix>-<i>` in `namespace`. */
  async createPods(namespace: string, prefix: string, from: number, n: number): Promise<void> {
    for (let i = from; i < from + n; i++)
      await this.client.coreV1.pods(namespace).create({
        apiVersion: "v1",
        kind: "Pod",
        metadata: { name: `${prefix}-${i}` },
        spec: { containers: [{ name: "c", image: "registry.k8s.io/pause:3.10" }] },
      });
  }

  /** Resolves once every pod of `namespace` is bound (within `ms`). */
  async allBound(namespace: string, ms = 60_000): Promise<void> {
    await waitFor(
      `every pod in ${namespace} to be bound`,
      async () => (await this.client.coreV1.pods(namespace).list()).items.every((p) => p.spec.nodeName),
      ms,
    );
  }

  /** A namespace and a node the schedulers can place pods on. */
  async seed(namespace: string): Promise<void> {
    await this.client.coreV1
      .namespaces()
      .create({ apiVersion: "v1", kind: "Namespace", metadata: { name: namespace } });
    await this.client.coreV1
      .nodes()
      .create({
        apiVersion: "v1",
        kind: "Node",
        metadata: { name: "n1", labels: { "kubernetes.io/hostname": "n1" } },
        status: {
          capacity: { cpu: "640", memory: "640Gi", pods: "5000" },
          allocatable: { cpu: "640", memory: "640Gi", pods: "5000" },
        },
      })
      .catch(() => undefined); // a second test in the file finds it there
  }

  /** Stops every scheduler (SIGKILL, SIGCONT for stopped ones), every proxy, the API server; removes the folder. */
  async close(): Promise<void> {
    for (const s of this.schedulers) {
      s.process.kill();
      s.process.child.kill("SIGCONT");
    }
    for (const p of this.proxies) await p?.stop();
    for (const p of this.incarnations) p.kill();
    this.client.closeIdleConnections();
    await Promise.all([
      ...this.schedulers.map((s) => s.process.exit),
      ...this.incarnations.map((p) => p.exit),
    ]);
    await rm(this.dir, { recursive: true, force: true });
  }
}
