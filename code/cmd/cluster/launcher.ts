/**
 * ClusterLauncher — the whole miniature on one machine, every component its own OS process with
 * upstream's flags: etcd (ours, or the real binary, one member or three), kube-apiserver (HTTPS,
 * the chapter-3 PKI, Node,RBAC, NodeRestriction), kube-controller-manager and kube-scheduler (one
 * each, or two or three with leader election), N kubelets (process runtime) and, for scale, one
 * kubemark process hosting hollow nodes. The closest upstream is hack/local-up-cluster.sh (one
 * machine, the binaries started with their flags, logs in files, a cleanup trap); kind and
 * kubeadm are the real-world ways to get the same cluster.
 *
 * Solves:
 * - `npm run cluster`, tests and chaos need the same cluster and the same handles on it: every
 *   component by name (pid, port, log, the exact command line), `kill` with any signal,
 *   `restart` with the same arguments (same port, same data dir, same root dir), `stop`;
 * - components are started detached (their own process group), so a Ctrl-C on the terminal
 *   reaches the supervisor only and the supervisor stops them in order, and chaos's SIGSTOP of
 *   one never touches another;
 * - each component writes to `logs/<name>.log` (appended across restarts), which is where the
 *   launcher waits for a component's ready line and where a learner looks when one dies;
 * - a restart of the cluster in the same directory keeps its data: etcd's data dir, the PKI
 *   (the kubeconfigs are written again, for the API server's new port) and the kubelets' root
 *   dirs (a kubelet adopts or cleans the containers it finds recorded there);
 * - chaos (`npm run cluster -- chaos`) starts its own cluster with three additive options:
 *   `faultProxies` (each component's connection through its own FaultProxy: `partition`),
 *   `auditPolicy` (`<dir>/audit.log`: `audit()`) and `processTokens` (a token per scheduler and
 *   controller-manager process, restarts included); `leaderIdentity` reads the identity a process
 *   logged. The wiring is component-wiring.ts's (shared with the tests' LocalCluster), the
 *   etcd and API server flags component-flags.ts's, the checks before a start preflight.ts's,
 *   how one process is spawned, logged and waited for component-process.ts's;
 * - `tracing` (on for `npm run cluster`, off unless asked for elsewhere): a span collector in
 *   this process and every component pointed at it (tracing-wiring.ts), closed after they stop;
 * - `advertiseAddress` (`--advertise-address`, local-up-cluster.sh's API_HOST_IP and
 *   KUBELET_HOST): the cluster over the machine's network address — the API server listens
 *   there (or on `bindAddress`), its serving certificate holds it, every kubeconfig points at it
 *   and each kubelet reports it as its InternalIP (`--node-ip`), which the API server dials for
 *   logs and exec. It is not passed to the API server as upstream's `--advertise-address`: that
 *   flag publishes the IP in the `kubernetes` Service's endpoints, which ours does not keep.
 *   etcd, the span collector and the other components' own ports stay on 127.0.0.1: only the
 *   API server and the kubelets are dialled by another process over the network.
 *
 * Invariants:
 * - `stop()` leaves nothing running, whatever the state: components (SIGCONT for a stopped one,
 *   SIGTERM, then SIGKILL to the group after a grace period), then every container process group
 *   recorded under a kubelet's root dir (containers outlive their kubelet on purpose);
 * - each kubelet has its own root dir, port and pod CIDR 10.244.<i>.0/24, and its own identity
 *   (`node-<name>` in the PKI), so Node authorization and NodeRestriction apply to it.
 *
 * What upstream's script does differently: local-up-cluster.sh runs the real binaries (with
 * sudo, a container runtime and CNI), one kubelet, and etcd from hack/lib/etcd.sh; it has no HA
 * and no hollow nodes (kubemark clusters are made by test/kubemark/start-kubemark.sh).
 *
 * @upstream kubernetes/kubernetes hack/local-up-cluster.sh (start_etcd, start_apiserver, start_controller_manager, start_kubescheduler, start_kubelet, cleanup; LEADER_ELECT defaults to false, the controller-manager gets --use-service-account-credentials)
 * @upstream kubernetes/kubernetes hack/lib/etcd.sh (kube::etcd::start)
 * @upstream kubernetes/kubernetes test/kubemark/start-kubemark.sh (hollow nodes in their own processes)
 * @chapter 08-cluster
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import type { Event as AuditEvent } from "../../apiserver/audit/event.ts";
import { type Clientset, newForConfig } from "../../client/kubernetes/clientset.ts";
import { buildConfigFromFlags } from "../../client/tools/clientcmd/client-config.ts";
import { ensurePKI, type PKILayout } from "../../pki/certs.ts";
import { forceFix, PKIError } from "../../pki/errors.ts";
import { freePort } from "../../testing/ports.ts";
import { apiServerArgs, etcdArgs, node, realEtcdArgs } from "./component-flags.ts";
import { isRunning, type Running, sleep, spawnComponent, waitForLog } from "./component-process.ts";
import { ComponentWiring, leaderIdentityIn, readAuditLog } from "./component-wiring.ts";
import { clusterAddress, hostPort, repoRoot, type StartOptions } from "./flags.ts";
import { LaunchError, preflight, tail, which } from "./preflight.ts";
import { type ComponentKind, type ComponentState, containerProcesses, signal } from "./state.ts";
import { ClusterTracing } from "./tracing-wiring.ts";

export { LaunchError, preflight, tail, which };

// The view is the supervisor's (start.ts), not a component: the launcher has no use for its port.
export interface ClusterOptions extends Omit<StartOptions, "viewPort" | "tracing"> {
  /** Every component's spans to a collector in this process, `<dir>/traces.jsonl` (default: off). */
  tracing?: boolean;
  /** The collector listens (before any component starts): the span file and its endpoint. */
  onTracing?: (file: string, endpoint: string) => void;
  /** A component started (or restarted): its state as recorded. */
  onComponent?: (c: ComponentState) => void;
  /** A component exited that nobody asked to stop (stop() and restart() do not count). */
  onExit?: (c: ComponentState, code: number | null, signal: NodeJS.Signals | null) => void;
  /** The PKI is written: the admin kubeconfig and the API server's URL. */
  onPKI?: (kubeconfig: string, server: string) => void;
  /** How long to wait for a component's ready line (default 300 s: the machine may be loaded). */
  readyTimeoutMs?: number;
  // chapter 8's chaos (cluster/chaos.ts): additive, off by default.
  /** Every component but the API server reaches the API server through a FaultProxy of its own (the API server reaches etcd through one). */
  faultProxies?: boolean;
  /** An audit Policy (YAML): the API server logs to `<dir>/audit.log` (every incarnation appends). */
  auditPolicy?: string;
  /** Each scheduler and controller-manager process (restarts included) authenticates with a token of its own (component-wiring.ts). */
  processTokens?: boolean;
}

/** Hollow node names follow kubemark's contract: `<prefix><i>`, i from 0. */
export const hollowNodePrefix = "hollow-node-";

export class ClusterLauncher {
  private readonly running = new Map<string, Running>();
  private stopping = false;
  private pkiLayout?: PKILayout;
  /** The admin's client (kubernetes-admin, system:masters); set once the PKI exists. */
  admin!: Clientset;
  server = "";
  readonly kubeletRootDirs: string[] = [];
  readonly nodeNames: string[];
  private readonly wiring: ComponentWiring;
  /** Writes a process's kubeconfig again before a restart. */
  private readonly kubeconfigs = new Map<string, () => string>();
  /** The span collector and the components' tracing flags (`tracing`). */
  private tracing?: ClusterTracing;

  constructor(readonly options: ClusterOptions) {
    this.wiring = new ComponentWiring(options.dir, options);
    this.nodeNames = [
      ...Array.from({ length: options.nodes }, (_, i) => `node-${i + 1}`),
      ...Array.from({ length: options.fakeNodes }, (_, i) => `${hollowNodePrefix}${i}`),
    ];
  }

  /** Starts a cluster; on failure everything started so far is stopped and the error rethrown. */
  static async start(options: ClusterOptions): Promise<ClusterLauncher> {
    const c = new ClusterLauncher(options);
    try {
      await c.launch();
    } catch (e) {
      await c.stop();
      throw e;
    }
    return c;
  }

  get dir(): string {
    return this.options.dir;
  }

  get kubeconfig(): string {
    return this.identity("admin").kubeconfig;
  }

  identity(id: string) {
    const found = this.pkiLayout?.identities.find((i) => i.id === id);
    if (!found) throw new Error(`no identity ${id} in the PKI`);
    return found;
  }

  /** stop() was called: nothing starts any more. */
  get stopped(): boolean {
    return this.stopping;
  }

  /** The span file (`<dir>/traces.jsonl`) once the collector runs; undefined without tracing. */
  get traces(): string | undefined {
    return this.tracing?.file;
  }

  /** Every component now, in start order. */
  components(): ComponentState[] {
    return [...this.running.values()].map((r) => r.state);
  }

  // #region launch
  /** Starts every component in order; the kubelets' readiness is waitForNodesReady's. */
  async launch(): Promise<void> {
    const o = this.options;
    const problem = preflight(o);
    if (problem) throw problem;
    const etcdBinary = o.etcd === "real" ? which("etcd") : undefined;
    mkdirSync(join(this.dir, "logs"), { recursive: true });
    await this.writePKI();
    if (o.tracing) {
      this.tracing = await ClusterTracing.start(this.dir);
      o.onTracing?.(this.tracing.file, this.tracing.endpoint);
    }
    const etcdURLs = await this.startEtcd(etcdBinary);
    this.checkStopping();
    await this.startAPIServer(etcdURLs);
    this.checkStopping();
    const ready: Promise<void>[] = [];
    const suffix = (i: number) => (o.ha === 1 ? "" : `-${i}`);
    for (let i = 1; i <= o.ha; i++) ready.push((await this.startControllerManager(suffix(i))).ready);
    for (let i = 1; i <= o.ha; i++) ready.push((await this.startScheduler(suffix(i))).ready);
    for (let i = 1; i <= o.nodes; i++) await this.startKubelet(i);
    if (o.fakeNodes > 0) ready.push(this.startKubemark());
    // Handled here (by Promise.all) even if one fails while the next component starts.
    for (const r of ready) r.catch(() => {});
    // The control plane's ready lines, while the kubelets start: a component still starting
    // (creating its controllers' ServiceAccounts) is not one a test or chaos should hit yet.
    await Promise.all(ready);
  }
  // #endregion launch

  private checkStopping(): void {
    if (this.stopping) throw new LaunchError("stopped while starting");
  }

  private async writePKI(): Promise<void> {
    const pkiDir = join(this.dir, "pki");
    const port = await freePort();
    // Every kubeconfig (admin's, each component's, each hollow node's) dials this URL.
    this.server = `https://${hostPort(clusterAddress(this.options), port)}`;
    // The kubeconfigs name the API server's URL, and its port is picked anew at each start:
    // they are derived files, written again; the CA, keys and certificates are kept.
    if (existsSync(pkiDir))
      for (const f of readdirSync(pkiDir))
        if (f.endsWith(".kubeconfig")) rmSync(join(pkiDir, f), { force: true });
    const pki = await ensurePKI({
      dir: pkiDir,
      nodes: this.nodeNames,
      server: this.server,
      // kubeadm puts the advertise address in the serving certificate: a client dials it there.
      // A PKI made before without it stops here, with the fix (delete apiserver.crt).
      apiServerCertExtraSANs: this.options.advertiseAddress ? [this.options.advertiseAddress] : [],
      encryptionAlgorithm: "ECDSA-P256",
    });
    // `npm run cluster` has no --force: its way to start from nothing is `down` (data included).
    if (pki instanceof PKIError)
      throw new LaunchError(
        `the PKI in ${pkiDir}: ${pki.message.replace(forceFix, "remove the whole cluster with `npm run cluster -- down` and start again")}`,
      );
    this.pkiLayout = pki.layout;
    this.admin = newForConfig(buildConfigFromFlags("", this.kubeconfig, {}));
    this.options.onPKI?.(this.kubeconfig, this.server);
  }

  // #region etcd
  /** One member of ours, or 1 or 3 of the real etcd (peers on 127.0.0.1); returns the client URLs. */
  private async startEtcd(binary: string | undefined): Promise<string[]> {
    const n = this.options.etcdMembers;
    const names = n === 1 ? ["etcd"] : Array.from({ length: n }, (_, i) => `etcd-${i + 1}`);
    const clients = await Promise.all(names.map(async () => freePort()));
    const clientURL = (i: number) => `http://127.0.0.1:${clients[i]}`;
    if (!binary) this.spawn("etcd", "etcd", clients[0], etcdArgs(this.dir, clientURL(0)));
    else {
      const peers = await Promise.all(names.map(async () => `http://127.0.0.1:${await freePort()}`));
      const initialCluster = names.map((m, i) => `${m}=${peers[i]}`).join(",");
      names.forEach((name, i) => {
        // Not ours: the real etcd's data has another format.
        const dataDir = join(this.dir, "etcd-real", name);
        // A member's data names its peers' URLs, and those ports are new at each start: a
        // three-member cluster starts from empty data (one member keeps its data).
        if (n > 1) rmSync(dataDir, { recursive: true, force: true });
        const member = { name, dataDir, clientURL: clientURL(i), peerURL: peers[i], initialCluster };
        this.spawn(name, "etcd", clients[i], realEtcdArgs(binary, member));
      });
    }
    // The line etcd (ours and the real one) logs once it serves clients: with a leader elected.
    await Promise.all(names.map((name) => this.waitForLog(name, "ready to serve client requests")));
    // The API server's connection to each member, through that member's proxy (chaos partitions it).
    return Promise.all(
      names.map(async (name, i) => `http://${await this.wiring.dial(name, `127.0.0.1:${clients[i]}`)}`),
    );
  }
  // #endregion etcd

  // #region apiserver
  private async startAPIServer(etcdURLs: string[]): Promise<void> {
    const port = Number(new URL(this.server).port);
    this.spawn("kube-apiserver", "kube-apiserver", port, [
      ...apiServerArgs(
        this.pkiLayout!,
        port,
        etcdURLs,
        this.options.bindAddress || clusterAddress(this.options),
      ),
      ...this.wiring.apiServerArgs(this.options.auditPolicy),
      ...this.tracingArgs(),
    ]);
    await this.waitForLog("kube-apiserver", "Serving securely on");
  }
  // #endregion apiserver

  /** The control plane's `--tracing-config-file`, when the cluster traces. */
  private tracingArgs(): string[] {
    return this.tracing?.controlPlaneArgs() ?? [];
  }

  get auditLog(): string {
    return this.wiring.auditLog;
  }

  /** The kubeconfig of process `name` (identity `id`): through its proxy, with its token, when chaos asks. */
  private async kubeconfigOf(name: string, id: string): Promise<string> {
    await this.wiring.dial(name, new URL(this.server).host);
    const write = () => this.wiring.kubeconfig(name, id, this.identity(id).kubeconfig);
    this.kubeconfigs.set(name, write);
    return write();
  }

  /**
   * One replica: without --ha, no election (as local-up-cluster.sh's `--leader-elect=false`);
   * with it, each replica a candidate on the component's Lease, with its own serving port and
   * its own identity (hostname_<uuid>, as upstream's).
   */
  private async startControllerManager(suffix: string): Promise<{ ready: Promise<void> }> {
    const port = await freePort();
    const name = `kube-controller-manager${suffix}`;
    const kubeconfig = await this.kubeconfigOf(name, "kube-controller-manager");
    this.spawn(name, "kube-controller-manager", port, [
      ...node("kube-controller-manager"),
      `--kubeconfig=${kubeconfig}`,
      // Each controller as its own ServiceAccount, as kubeadm and local-up-cluster.sh run it:
      // RBAC's bootstrap roles (system:controller:deployment-controller, …) grant each its work.
      "--use-service-account-credentials",
      `--secure-port=${port}`,
      "--bind-address=127.0.0.1",
      `--leader-elect=${this.options.ha > 1}`,
      ...this.tracingArgs(),
    ]);
    // Its ready line: the controllers started, or (a candidate) waiting to lead.
    return { ready: this.waitForLog(name, this.options.ha > 1 ? "Waiting to lead" : " controller(s): ") };
  }

  private async startScheduler(suffix: string): Promise<{ ready: Promise<void> }> {
    const port = await freePort();
    const name = `kube-scheduler${suffix}`;
    const kubeconfig = await this.kubeconfigOf(name, "kube-scheduler");
    this.spawn(name, "kube-scheduler", port, [
      ...node("kube-scheduler"),
      `--kubeconfig=${kubeconfig}`,
      `--secure-port=${port}`,
      "--bind-address=127.0.0.1",
      `--leader-elect=${this.options.ha > 1}`,
      ...this.tracingArgs(),
    ]);
    return { ready: this.waitForLog(name, '"Caches are synced"') };
  }

  // #region kubelet
  private async startKubelet(i: number): Promise<void> {
    const name = `node-${i}`;
    const rootDir = join(this.dir, "kubelets", name);
    this.kubeletRootDirs.push(rootDir);
    const port = await freePort();
    const kubeconfig = await this.kubeconfigOf(`kubelet-${name}`, `node-${name}`);
    this.spawn(`kubelet-${name}`, "kubelet", port, [
      ...node("kubelet"),
      `--kubeconfig=${kubeconfig}`,
      `--hostname-override=${name}`,
      `--root-dir=${rootDir}`,
      `--port=${port}`,
      `--pod-cidr=10.244.${i}.0/24`,
      // The Node's InternalIP: where the API server dials this kubelet for logs and exec.
      ...(this.options.advertiseAddress ? [`--node-ip=${this.options.advertiseAddress}`] : []),
      "--runtime=process",
      ...(this.tracing?.kubeletArgs() ?? []),
      // N kubelets on one machine: no fixed healthz or read-only port.
      "--healthz-port=0",
      "--read-only-port=0",
    ]);
  }
  // #endregion kubelet

  /** One process hosting every hollow node, each with its own identity from the PKI dir. */
  private async startKubemark(): Promise<void> {
    const n = this.options.fakeNodes;
    this.spawn("kubemark", "kubemark", undefined, [
      ...node("kubemark"),
      "--morph=kubelet",
      `--count=${n}`,
      `--name-prefix=${hollowNodePrefix}`,
      `--kubeconfig-dir=${join(this.dir, "pki")}`,
      `--root-dir=${join(this.dir, "kubemark")}`,
      ...this.tracingArgs(),
    ]);
    await this.waitForLog("kubemark", `hollow nodes started: ${n}`);
  }

  // #region spawn
  /** Starts one component detached (component-process.ts), recorded under its name. */
  private spawn(name: string, kind: ComponentKind, port: number | undefined, argv: string[]): ComponentState {
    this.checkStopping();
    const log = join(this.dir, "logs", `${name}.log`);
    const r = spawnComponent({ name, kind, port, argv, log, cwd: repoRoot }, (state, code, sig) => {
      if (!this.stopping) this.options.onExit?.(state, code, sig);
    });
    this.running.set(name, r);
    this.options.onComponent?.(r.state);
    return r.state;
  }

  /** Waits until the component's log (since its start) has `text`; fails at once if it exits. */
  private waitForLog(name: string, text: string): Promise<void> {
    const timeoutMs = this.options.readyTimeoutMs ?? 300_000;
    return waitForLog(this.running.get(name)!, text, { timeoutMs, stopping: () => this.stopping });
  }
  // #endregion spawn

  /** Sends `sig` to the component (SIGKILL, SIGSTOP, SIGCONT, SIGTERM); false if it is not running. */
  kill(name: string, sig: NodeJS.Signals = "SIGKILL"): boolean {
    const r = this.running.get(name);
    if (!r) throw new Error(`no component ${name}`);
    if (!isRunning(r)) return false;
    return signal(r.state.pid, sig);
  }

  /** SIGSTOP: the process freezes, its sockets stay open (chaos's pause). */
  pause(name: string): boolean {
    return this.kill(name, "SIGSTOP");
  }

  /** SIGCONT after a pause. */
  resume(name: string): boolean {
    return this.kill(name, "SIGCONT");
  }

  /** Starts the component again with the same command line (port, data dir, root dir); kills it first if it runs. */
  async restart(name: string): Promise<ComponentState> {
    const r = this.running.get(name);
    if (!r) throw new Error(`no component ${name}`);
    if (isRunning(r)) {
      r.expected = true;
      signal(r.state.pid, "SIGKILL");
      signal(r.state.pid, "SIGCONT");
    }
    await r.exited;
    this.kubeconfigs.get(name)?.(); // a new token: the restarted process is another writer
    const state = this.spawn(r.state.name, r.state.kind, r.state.port, r.state.args);
    // etcd and the API server serve others: restarted means serving again (as LocalCluster's).
    if (state.kind === "etcd") await this.waitForLog(name, "ready to serve client requests");
    if (state.kind === "kube-apiserver") await this.waitForLog(name, "Serving securely on");
    return state;
  }

  /** Resolves once the component's current process has exited. */
  async exited(name: string): Promise<void> {
    await this.running.get(name)?.exited;
  }

  // #region chaos
  /** Its connection to the API server (the API server's: to every etcd member) drops, or passes again. */
  partition(name: string, on: boolean): void {
    const r = this.running.get(name);
    if (!r) throw new Error(`no component ${name}`);
    const etcd = this.components()
      .filter((c) => c.kind === "etcd")
      .map((c) => c.name);
    this.wiring.partition(r.state.kind === "kube-apiserver" ? etcd : [name], on);
  }

  /** The identity the current process of a scheduler or controller-manager elects with (from its log). */
  leaderIdentity(name: string): string | undefined {
    const r = this.running.get(name);
    if (!r) return undefined;
    return leaderIdentityIn(readFileSync(r.state.log).subarray(r.logFrom).toString("utf8"));
  }

  /** Every audit event of every API server incarnation (`auditPolicy`), in log order. */
  audit(): AuditEvent[] {
    return readAuditLog(this.auditLog);
  }
  // #endregion chaos

  /** Node names Ready now, of those this cluster started. */
  async readyNodes(): Promise<Set<string>> {
    const list = await this.admin.coreV1.nodes().list();
    return new Set(
      list.items
        .filter((n) => n.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True"))
        .map((n) => n.metadata.name ?? "")
        .filter((n) => this.nodeNames.includes(n)),
    );
  }

  /** Waits until every node is Ready, calling `progress` on each poll; false after `timeoutMs` or a stop. */
  async waitForNodesReady(
    progress: (ready: number, total: number) => void,
    timeoutMs = 600_000,
  ): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    while (!this.stopping && Date.now() < deadline) {
      const ready = await this.readyNodes().catch(() => new Set<string>());
      progress(ready.size, this.nodeNames.length);
      if (ready.size === this.nodeNames.length) return true;
      await sleep(500);
    }
    return false;
  }

  // #region stop
  /**
   * Stops everything: SIGCONT and SIGTERM to every component, up to `graceMs` for them to exit,
   * SIGKILL to the groups of those left; then every container's process group.
   */
  async stop(graceMs = 15_000): Promise<void> {
    this.stopping = true;
    const all = [...this.running.values()];
    for (const r of all) {
      r.expected = true;
      if (!isRunning(r)) continue;
      signal(r.state.pid, "SIGCONT");
      signal(r.state.pid, "SIGTERM");
    }
    const exited = Promise.all(all.map((r) => r.exited));
    await Promise.race([exited, sleep(graceMs)]);
    for (const r of all) {
      if (!isRunning(r)) continue;
      signal(-r.state.pid, "SIGKILL");
      signal(r.state.pid, "SIGKILL");
    }
    await Promise.race([exited, sleep(10_000)]);
    // Containers outlive their kubelet on purpose (a restarted kubelet adopts them): kill them here.
    for (const c of containerProcesses(this.kubeletRootDirs)) signal(-c.pid, "SIGKILL");
    await this.wiring.stop();
    // Last: every component has flushed its spans on SIGTERM (a killed one lost its last batch).
    await this.tracing?.close();
    this.admin?.closeIdleConnections();
  }
  // #endregion stop
}
