/**
 * LocalCluster — chapter 7's proofs' cluster: kube-apiserver (HTTPS, the chapter-3 PKI, Node and
 * RBAC authorization, the default admission chain with NodeRestriction), kube-controller-manager,
 * kube-scheduler and N kubelets, each its own process started as a learner starts it, and the
 * real kubectl with the admin kubeconfig.
 * No upstream counterpart: upstream's node e2e tests run against a real node (test/e2e_node), its
 * cluster tests against a cluster made by kind or kubeadm.
 *
 * Solves:
 * - every proof of chapter 7 needs the same cluster and the same way to drive it (kubectl, a
 *   clientset as admin) and to break it (kill -9 a kubelet, restart it on the same root dir);
 * - nothing outlives a test: the kubelet's containers are detached process groups that survive
 *   their kubelet on purpose (so a restarted kubelet can adopt them), so `close()` kills every
 *   component and then every container process recorded in any kubelet's root dir.
 *
 * - chapter 8 (chaos) breaks any component on purpose: with the `etcdProcess`, `faultProxies`,
 *   `schedulers`/`controllerManagers` + `leaderElection`, `auditPolicy` and `processTokens`
 *   options every component is a named entry of `components`, which `killComponent`,
 *   `pauseComponent`, `resumeComponent`, `restartComponent` (same args, port and data dir) and
 *   `partitionComponent` (its FaultProxy drops) act on. Without them it is chapter 7's cluster.
 *   The token file, the per-process kubeconfig, the audit log's reading and the leader identity
 *   are cluster/component-wiring.ts's, shared with the ClusterLauncher.
 *
 * Invariants:
 * - `close()` is safe to call whatever state the cluster is in (partly started, processes already
 *   dead, SIGSTOPped ones, partitioned proxies);
 * - each kubelet has its own root dir, port and pod CIDR (10.244.<i>.0/24): two never collide.
 *
 * @upstream none — test harness
 * @chapter 07-kubelet
 */
import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parse, stringify } from "yaml";
import type { Event as AuditEvent } from "../../apiserver/audit/event.ts";
import { type Clientset, newForConfig } from "../../client/kubernetes/clientset.ts";
import { buildConfigFromFlags } from "../../client/tools/clientcmd/client-config.ts";
import type { ContainerRecord } from "../../kubelet/runtime/process-state.ts";
import { isSameProcess, readRecords } from "../../kubelet/runtime/process-state.ts";
import { ensurePKI, type PKILayout } from "../../pki/certs.ts";
import { PKIError } from "../../pki/errors.ts";
import { FaultProxy } from "../../testing/fault-proxy.ts";
import { freePort } from "../../testing/ports.ts";
import {
  componentKubeconfig,
  leaderIdentityIn,
  readAuditLog,
  writeProcessTokens,
} from "../cluster/component-wiring.ts";
import { type CommandProcess, startCommand } from "./command-process.ts";

type Tracing = NonNullable<LocalClusterOptions["tracing"]>;

/** chapter 8: the API server's TracingConfiguration file (the scheduler and controller-manager read the same). */
function tracingConfigFile(t: Tracing): string {
  return stringify({
    apiVersion: "apiserver.config.k8s.io/v1beta1",
    kind: "TracingConfiguration",
    endpoint: t.endpoint,
    samplingRatePerMillion: t.samplingRatePerMillion ?? 1_000_000,
  });
}

/** chapter 8: the kubelets' configuration with its `tracing` field (a minimal file when none was given). */
function withTracing(kubeletConfig: string | undefined, t: Tracing | undefined): string | undefined {
  if (!t) return kubeletConfig;
  const doc = (kubeletConfig ? parse(kubeletConfig) : undefined) ?? {
    apiVersion: "kubelet.config.k8s.io/v1beta1",
    kind: "KubeletConfiguration",
  };
  doc.tracing = { endpoint: t.endpoint, samplingRatePerMillion: t.samplingRatePerMillion ?? 1_000_000 };
  return stringify(doc);
}

const cmd = (name: string) => new URL(`../${name}.ts`, import.meta.url).pathname;

export interface LocalClusterOptions {
  /** Node names; each gets a kubelet (default: one, `node-1`). */
  nodes?: string[];
  /**
   * Nodes whose identity (node-<name>.kubeconfig, `system:node:<name>`) the PKI makes up-front but
   * whose kubelet is not started: a test adds the node later with `startKubelet(name)` (chapter 8:
   * a pending pod scheduled once a node that fits joins).
   */
  spareNodes?: string[];
  /** Extra flags for every kubelet (durations shortened for a test, …). */
  kubeletArgs?: string[];
  /**
   * A KubeletConfiguration (kubelet.config.k8s.io/v1beta1, YAML) every kubelet gets as `--config`:
   * the node Lease's duration and the status report frequency have no flag upstream.
   */
  kubeletConfig?: string;
  controllerManagerArgs?: string[];
  schedulerArgs?: string[];
  apiServerArgs?: string[];
  /** Start kube-controller-manager (default true). */
  controllerManager?: boolean;
  /** Start kube-scheduler (default true). */
  scheduler?: boolean;
  /**
   * Called with every component process as it starts, before `start` resolves: a demo stopped by
   * Ctrl-C while the cluster is still starting can still kill what was started.
   */
  onProcess?: (p: CommandProcess) => void;
  /**
   * chapter 8: tracing — every component sends its spans to `endpoint` (a collector,
   * code/tracing/collector.ts): the API server, scheduler and controller-manager get
   * `--tracing-config-file`, each kubelet the `tracing` field of its KubeletConfiguration (added
   * to `kubeletConfig`, or a file of its own with only that field). Absent: no tracing.
   */
  tracing?: { endpoint: string; samplingRatePerMillion?: number };
  /**
   * chapter 8: etcd as its own process (code/cmd/etcd.ts, its data dir in the cluster folder) and
   * the API server on `--etcd-servers`, so the API server can be killed and restarted with its
   * objects — and etcd too, on the same data dir.
   */
  etcdProcess?: boolean;
  /**
   * chapter 8: every component but the API server reaches the API server through a FaultProxy of
   * its own (the API server reaches etcd through one), so one connection can be cut.
   */
  faultProxies?: boolean;
  /** chapter 8: how many kube-scheduler processes (default 1). */
  schedulers?: number;
  /** chapter 8: how many kube-controller-manager processes (default 1). */
  controllerManagers?: number;
  /** chapter 8: leader election on, with these durations (ms), instead of `--leader-elect=false`. */
  leaderElection?: { lease: number; renew: number; retry: number };
  /** chapter 8: an audit Policy (YAML); every API server incarnation appends to `<dir>/audit.log`. */
  auditPolicy?: string;
  /**
   * chapter 8: every scheduler and controller-manager process (restarts included) authenticates
   * with a bearer token of its own — upstream's user, uid `<component>#<n>` — so the audit log
   * tells the processes apart (`--token-auth-file`), as ha-control-plane.ts does for chapter 6.
   */
  processTokens?: boolean;
}

/** chapter 8: one named component process of the cluster, and how to start it again. */
export interface ComponentProcess {
  /** "etcd", "kube-apiserver", "kube-scheduler-1", "kube-controller-manager-1", "kubelet-<node>". */
  name: string;
  kind: "etcd" | "kube-apiserver" | "kube-scheduler" | "kube-controller-manager" | "kubelet";
  process: CommandProcess;
  /** Its connection upstream, when `faultProxies`. */
  proxy?: FaultProxy;
  /** Starts a new incarnation (same args, port, data dir); resolves once it serves. */
  start: () => Promise<CommandProcess>;
}

export interface KubeletProcess {
  name: string;
  rootDir: string;
  port: number;
  podCIDR: string;
  process: CommandProcess;
}

export class LocalCluster {
  readonly kubelets = new Map<string, KubeletProcess>();
  private readonly processes: CommandProcess[] = [];
  apiserver?: CommandProcess;
  controllerManager?: CommandProcess;
  scheduler?: CommandProcess;
  /** The admin's client (kubernetes-admin, system:masters). */
  admin!: Clientset;
  /** chapter 8: every component by name (the current incarnation of each). */
  readonly components = new Map<string, ComponentProcess>();
  etcd?: CommandProcess;
  private readonly proxies: FaultProxy[] = [];
  private nextToken = 0;
  private closed = false;

  private constructor(
    readonly dir: string,
    readonly port: number,
    readonly layout: PKILayout,
    readonly options: LocalClusterOptions,
  ) {}

  get adminKubeconfig(): string {
    return this.identity("admin").kubeconfig;
  }

  identity(id: string) {
    const found = this.layout.identities.find((i) => i.id === id);
    if (!found) throw new Error(`no identity ${id} in the PKI`);
    return found;
  }

  static async start(options: LocalClusterOptions = {}): Promise<LocalCluster> {
    const nodes = options.nodes ?? ["node-1"];
    const dir = await mkdtemp(join(tmpdir(), "local-cluster-"));
    const port = await freePort();
    const pki = await ensurePKI({
      dir: join(dir, "pki"),
      nodes: [...nodes, ...(options.spareNodes ?? [])],
      server: `https://127.0.0.1:${port}`,
      encryptionAlgorithm: "ECDSA-P256",
    });
    if (pki instanceof PKIError) throw pki;
    const c = new LocalCluster(dir, port, pki.layout, options);
    const kubeletConfig = withTracing(options.kubeletConfig, options.tracing); // chapter 8
    if (kubeletConfig) await writeFile(join(dir, "kubelet-config.yaml"), kubeletConfig);
    if (options.tracing)
      await writeFile(join(dir, "tracing-config.yaml"), tracingConfigFile(options.tracing));
    try {
      await c.startControlPlane();
      for (const name of nodes) await c.startKubelet(name);
      await c.waitForNodesReady(nodes);
    } catch (e) {
      await c.close();
      throw e;
    }
    return c;
  }

  /** chapter 8: the control plane's `--tracing-config-file`, when the cluster traces. */
  private tracingArgs(): string[] {
    return this.options.tracing ? [`--tracing-config-file=${join(this.dir, "tracing-config.yaml")}`] : [];
  }

  private track(p: CommandProcess): CommandProcess {
    this.processes.push(p);
    // chapter 8: a chaos run that outlives its test (a timeout) may restart a component after
    // close(): that process dies at once instead of outliving the test.
    if (this.closed) {
      p.kill();
      throw new Error("the cluster is closed");
    }
    this.options.onProcess?.(p);
    return p;
  }

  private async startControlPlane(): Promise<void> {
    const l = this.layout;
    const o = this.options;
    let etcdServers: string[] = [];
    if (o.etcdProcess) {
      const etcdPort = await freePort();
      const url = `http://127.0.0.1:${etcdPort}`;
      const startEtcd = async () => {
        const p = this.track(
          startCommand(cmd("etcd"), [
            "--name=local",
            `--data-dir=${join(this.dir, "etcd")}`,
            `--listen-client-urls=${url}`,
            `--advertise-client-urls=${url}`,
          ]),
        );
        this.etcd = p;
        await p.waitForStderr("ready to serve client requests", 120_000);
        return p;
      };
      const proxy = o.faultProxies ? await this.proxy(url) : undefined;
      this.register({ name: "etcd", kind: "etcd", proxy, start: startEtcd }, await startEtcd());
      etcdServers = [`--etcd-servers=${proxy ? `http://${proxy.address}` : url}`];
    }
    if (o.processTokens) writeProcessTokens(join(this.dir, "tokens.csv"));
    if (o.auditPolicy) await writeFile(join(this.dir, "audit.yaml"), o.auditPolicy);
    const startAPIServer = async () => {
      const p = this.track(
        startCommand(cmd("kube-apiserver"), [
          `--secure-port=${this.port}`,
          "--bind-address=127.0.0.1",
          `--tls-cert-file=${l.apiServerCert}`,
          `--tls-private-key-file=${l.apiServerKey}`,
          `--client-ca-file=${l.caCert}`,
          "--authorization-mode=Node,RBAC",
          "--enable-admission-plugins=NodeRestriction",
          `--service-account-signing-key-file=${l.serviceAccountKey}`,
          `--service-account-key-file=${l.serviceAccountPublicKey}`,
          "--service-account-issuer=https://kubernetes.default.svc.cluster.local",
          // chapter 7: how the API server reaches kubelets (kubectl logs, exec).
          `--kubelet-client-certificate=${l.apiServerKubeletClientCert}`,
          `--kubelet-client-key=${l.apiServerKubeletClientKey}`,
          "--kubelet-preferred-address-types=InternalIP",
          "--v=0",
          ...etcdServers,
          ...(o.processTokens ? [`--token-auth-file=${join(this.dir, "tokens.csv")}`] : []),
          ...(o.auditPolicy
            ? [
                `--audit-policy-file=${join(this.dir, "audit.yaml")}`,
                `--audit-log-path=${join(this.dir, "audit.log")}`,
              ]
            : []),
          ...this.tracingArgs(),
          ...(this.options.apiServerArgs ?? []),
        ]),
      );
      this.apiserver = p;
      await p.waitForStderr("Serving securely on", 120_000);
      return p;
    };
    this.register(
      { name: "kube-apiserver", kind: "kube-apiserver", start: startAPIServer },
      await startAPIServer(),
    );
    this.admin = newForConfig(buildConfigFromFlags("", this.adminKubeconfig, {}));
    const le = o.leaderElection;
    const leaderArgs = le
      ? [
          "--leader-elect=true",
          `--leader-elect-lease-duration=${le.lease}ms`,
          `--leader-elect-renew-deadline=${le.renew}ms`,
          `--leader-elect-retry-period=${le.retry}ms`,
        ]
      : ["--leader-elect=false"];
    if (o.controllerManager !== false) {
      for (let i = 1; i <= (o.controllerManagers ?? 1); i++) {
        const name = `kube-controller-manager-${i}`;
        const proxy = o.faultProxies ? await this.proxy(`127.0.0.1:${this.port}`) : undefined;
        const start = async () => {
          const p = this.track(
            startCommand(cmd("kube-controller-manager"), [
              `--kubeconfig=${await this.kubeconfigFor("kube-controller-manager", name, proxy)}`,
              "--secure-port=0",
              ...leaderArgs,
              ...this.tracingArgs(),
              ...(o.controllerManagerArgs ?? []),
            ]),
          );
          this.controllerManager ??= p;
          return p;
        };
        this.register({ name, kind: "kube-controller-manager", proxy, start }, await start());
      }
    }
    if (o.scheduler !== false) {
      for (let i = 1; i <= (o.schedulers ?? 1); i++) {
        const name = `kube-scheduler-${i}`;
        const proxy = o.faultProxies ? await this.proxy(`127.0.0.1:${this.port}`) : undefined;
        const start = async () => {
          const p = this.track(
            startCommand(cmd("kube-scheduler"), [
              `--kubeconfig=${await this.kubeconfigFor("kube-scheduler", name, proxy)}`,
              "--secure-port=0",
              ...leaderArgs,
              ...this.tracingArgs(),
              ...(o.schedulerArgs ?? []),
            ]),
          );
          this.scheduler ??= p;
          return p;
        };
        this.register({ name, kind: "kube-scheduler", proxy, start }, await start());
      }
    }
  }

  // #region chapter-8-components
  private register(c: Omit<ComponentProcess, "process">, process: CommandProcess): void {
    this.components.set(c.name, { ...c, process });
  }

  private async proxy(target: string): Promise<FaultProxy> {
    const p = await FaultProxy.start(target);
    this.proxies.push(p);
    return p;
  }

  /**
   * The kubeconfig a component process starts with: its identity's, pointed at its proxy when it
   * has one, with a bearer token of its own instead of the certificate when `processTokens`.
   */
  private async kubeconfigFor(identity: string, name: string, proxy?: FaultProxy): Promise<string> {
    const original = this.identity(identity).kubeconfig;
    const token = this.options.processTokens && identity.startsWith("kube-") ? this.nextToken++ : undefined;
    if (!proxy && token === undefined) return original;
    const text = componentKubeconfig(await readFile(original, "utf8"), {
      proxyAddress: proxy?.address,
      component: identity,
      token,
    });
    const file = join(this.dir, `${name}${token !== undefined ? `-${token}` : ""}.kubeconfig`);
    await writeFile(file, text, { mode: 0o600 });
    return file;
  }

  private component(name: string): ComponentProcess {
    const c = this.components.get(name);
    if (!c) throw new Error(`no component ${name} (have ${[...this.components.keys()].join(", ")})`);
    return c;
  }

  /** kill -9; resolves once it has exited. */
  async killComponent(name: string): Promise<void> {
    const p = this.component(name).process;
    p.kill();
    p.child.kill("SIGCONT");
    await p.waitForExit(30_000).catch(() => null);
  }

  pauseComponent(name: string): void {
    this.component(name).process.child.kill("SIGSTOP");
  }

  resumeComponent(name: string): void {
    this.component(name).process.child.kill("SIGCONT");
  }

  /** Stops it (SIGTERM, 10 s, then SIGKILL) if it runs, and starts it again with the same args, port and data. */
  async restartComponent(name: string): Promise<void> {
    const c = this.component(name);
    const child = c.process.child;
    if (child.exitCode === null && child.signalCode === null) {
      child.kill("SIGCONT");
      child.kill("SIGTERM");
      if ((await c.process.waitForExit(10_000).catch(() => undefined)) === undefined)
        await this.killComponent(name);
    }
    c.process = await c.start();
  }

  /** Its connection to the API server (the API server's to etcd) drops, or passes again. */
  partitionComponent(name: string, on: boolean): void {
    const c = this.component(name);
    const proxy = c.kind === "kube-apiserver" ? this.components.get("etcd")?.proxy : c.proxy;
    if (!proxy) throw new Error(`${name} has no fault proxy (start the cluster with faultProxies)`);
    if (on) proxy.drop();
    else proxy.pass();
  }

  /** The identity a scheduler or controller-manager process elects with (from its log). */
  leaderIdentity(name: string): string | undefined {
    return leaderIdentityIn(this.components.get(name)?.process.stderr() ?? "");
  }

  /** Every audit event the API server incarnations logged (`auditPolicy`), in log order. */
  audit(): AuditEvent[] {
    return readAuditLog(join(this.dir, "audit.log"));
  }
  // #endregion chapter-8-components

  /** Starts (or restarts, on the same root dir, port and CIDR) the kubelet of `name`. */
  async startKubelet(name: string, extraArgs: string[] = []): Promise<KubeletProcess> {
    const old = this.kubelets.get(name);
    const index = old ? -1 : this.kubelets.size;
    const rootDir = old?.rootDir ?? join(this.dir, `kubelet-${name}`);
    const port = old?.port ?? (await freePort());
    const podCIDR = old?.podCIDR ?? `10.244.${index + 1}.0/24`;
    const proxy =
      this.components.get(`kubelet-${name}`)?.proxy ??
      (this.options.faultProxies ? await this.proxy(`127.0.0.1:${this.port}`) : undefined);
    const kubeconfig = await this.kubeconfigFor(`node-${name}`, `kubelet-${name}`, proxy);
    const process = this.track(
      startCommand(cmd("kubelet"), [
        `--kubeconfig=${kubeconfig}`,
        `--hostname-override=${name}`,
        `--root-dir=${rootDir}`,
        `--port=${port}`,
        `--pod-cidr=${podCIDR}`,
        "--runtime=process",
        ...(this.options.kubeletConfig || this.options.tracing
          ? [`--config=${join(this.dir, "kubelet-config.yaml")}`]
          : []),
        // Two kubelets on one machine: no fixed healthz or read-only port.
        "--healthz-port=0",
        "--read-only-port=0",
        ...(this.options.kubeletArgs ?? []),
        ...extraArgs,
      ]),
    );
    const k: KubeletProcess = { name, rootDir, port, podCIDR, process };
    this.kubelets.set(name, k);
    this.register(
      {
        name: `kubelet-${name}`,
        kind: "kubelet",
        proxy,
        start: async () => (await this.startKubelet(name)).process,
      },
      process,
    );
    return k;
  }

  async waitForNodesReady(names: string[], timeoutMs = 120_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const list = await this.admin.coreV1
        .nodes()
        .list()
        .catch(() => undefined);
      const ready = new Set(
        (list?.items ?? [])
          .filter((n) => n.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True"))
          .map((n) => n.metadata.name),
      );
      if (names.every((n) => ready.has(n))) return;
      if (Date.now() > deadline) {
        const logs = names.map(
          (n) => `--- kubelet ${n}:\n${this.kubelets.get(n)?.process.stderr().slice(-2000)}`,
        );
        throw new Error(`timed out waiting for nodes ${names.join(", ")} to be Ready\n${logs.join("\n")}`);
      }
      await new Promise((r) => setTimeout(r, 200));
    }
  }

  /** The real kubectl with the admin's kubeconfig; never rejects (the exit code is in the result). */
  kubectl(args: string[], timeoutMs = 60_000): Promise<{ code: number; stdout: string; stderr: string }> {
    return new Promise((resolve) => {
      execFile(
        "kubectl",
        [`--kubeconfig=${this.adminKubeconfig}`, ...args],
        { timeout: timeoutMs, maxBuffer: 16 << 20 },
        (err, stdout, stderr) => {
          const code = err ? (typeof err.code === "number" ? err.code : 1) : 0;
          resolve({ code, stdout, stderr });
        },
      );
    });
  }

  /** Every container process any kubelet of this cluster started that still runs, by container ID. */
  containerProcesses(): { id: string; pid: number }[] {
    const out: { id: string; pid: number }[] = [];
    for (const k of this.kubelets.values()) {
      for (const rec of readRecords<ContainerRecord>(join(k.rootDir, "runtime", "containers"))) {
        if (rec.pid !== undefined && isSameProcess(rec.pid, rec.startToken))
          out.push({ id: rec.status.id, pid: rec.pid });
      }
    }
    return out;
  }

  containerPids(): number[] {
    return this.containerProcesses().map((c) => c.pid);
  }

  /** Kills every process of the cluster — components first, then the containers — and removes its folder. */
  async close(): Promise<void> {
    this.closed = true;
    for (const p of this.processes) {
      p.kill();
      p.child.kill("SIGCONT");
    }
    await Promise.all(this.processes.map((p) => p.waitForExit(10_000).catch(() => null)));
    for (const pid of this.containerPids()) {
      try {
        // Each container is the leader of its own process group: the group goes with it.
        process.kill(-pid, "SIGKILL");
      } catch {
        // already gone
      }
    }
    for (const p of this.proxies) await p.stop().catch(() => {});
    this.admin?.closeIdleConnections();
    await rm(this.dir, { recursive: true, force: true });
  }
}
