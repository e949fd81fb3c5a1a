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
 * Invariants:
 * - `close()` is safe to call whatever state the cluster is in (partly started, processes already
 *   dead, SIGSTOPped ones);
 * - each kubelet has its own root dir, port and pod CIDR (10.244.<i>.0/24): two never collide.
 *
 * @upstream none — test harness
 * @chapter 07-kubelet
 */
import { execFile } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parse, stringify } from "yaml";
import { type Clientset, newForConfig } from "../../client/kubernetes/clientset.ts";
import { buildConfigFromFlags } from "../../client/tools/clientcmd/client-config.ts";
import type { ContainerRecord } from "../../kubelet/runtime/process-state.ts";
import { isSameProcess, readRecords } from "../../kubelet/runtime/process-state.ts";
import { ensurePKI, type PKILayout } from "../../pki/certs.ts";
import { PKIError } from "../../pki/errors.ts";
import { freePort } from "../../testing/ports.ts";
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
      nodes,
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
    this.options.onProcess?.(p);
    return p;
  }

  private async startControlPlane(): Promise<void> {
    const l = this.layout;
    this.apiserver = this.track(
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
        ...this.tracingArgs(),
        ...(this.options.apiServerArgs ?? []),
      ]),
    );
    await this.apiserver.waitForStderr("Serving securely on", 120_000);
    this.admin = newForConfig(buildConfigFromFlags("", this.adminKubeconfig, {}));
    if (this.options.controllerManager !== false) {
      this.controllerManager = this.track(
        startCommand(cmd("kube-controller-manager"), [
          `--kubeconfig=${this.identity("kube-controller-manager").kubeconfig}`,
          "--secure-port=0",
          "--leader-elect=false",
          ...this.tracingArgs(),
          ...(this.options.controllerManagerArgs ?? []),
        ]),
      );
    }
    if (this.options.scheduler !== false) {
      this.scheduler = this.track(
        startCommand(cmd("kube-scheduler"), [
          `--kubeconfig=${this.identity("kube-scheduler").kubeconfig}`,
          "--secure-port=0",
          "--leader-elect=false",
          ...this.tracingArgs(),
          ...(this.options.schedulerArgs ?? []),
        ]),
      );
    }
  }

  /** Starts (or restarts, on the same root dir, port and CIDR) the kubelet of `name`. */
  async startKubelet(name: string, extraArgs: string[] = []): Promise<KubeletProcess> {
    const old = this.kubelets.get(name);
    const index = old ? -1 : this.kubelets.size;
    const rootDir = old?.rootDir ?? join(this.dir, `kubelet-${name}`);
    const port = old?.port ?? (await freePort());
    const podCIDR = old?.podCIDR ?? `10.244.${index + 1}.0/24`;
    const process = this.track(
      startCommand(cmd("kubelet"), [
        `--kubeconfig=${this.identity(`node-${name}`).kubeconfig}`,
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
    this.admin?.closeIdleConnections();
    await rm(this.dir, { recursive: true, force: true });
  }
}
