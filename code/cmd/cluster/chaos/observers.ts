/**
 * The chaos observers — watchers that run for the whole chaos run through their own connections
 * to the API server, and record what the invariants judge afterwards: where every pod was bound
 * and where its containers ran, every version of the leader-election Leases, and informer caches
 * to compare with a fresh list at the end.
 * No upstream counterpart: upstream's disruption tests poll with the e2e framework's clients
 * after the disruption (test/e2e/cloud/gcp/restart.go); these watch throughout, as Jepsen's
 * clients record a history.
 *
 * Solves:
 * - the API server the observers talk to is itself killed, paused and restarted: they are chapter
 *   4's informers (code/client/informers), whose reflectors re-list and re-watch after every
 *   broken watch — which makes "every informer cache equals a fresh list" a test of chapter 4
 *   under fire, not only a tool;
 * - the API's view of a pod's node is not the whole truth (a kubelet could run a pod it was never
 *   given): every 500 ms the observer also reads each kubelet's container records
 *   (code/kubelet/runtime/process-state.ts) and notes, for every container process alive, its
 *   pod's uid and that kubelet's node.
 *
 * Invariants: sightings and observations are appended in the order they were seen; nothing here
 * writes to the cluster.
 *
 * @upstream none — test tooling (kubernetes/kubernetes staging/src/k8s.io/client-go/tools/cache/reflector.go: the relist and rewatch it relies on)
 * @chapter 08-cluster
 */
import { join } from "node:path";
import type { Lease } from "../../../api/coordination.ts";
import type { Pod } from "../../../api/core.ts";
import type { KubeObject } from "../../../api/meta.ts";
import type { GroupVersionResource } from "../../../api/schema.ts";
import { newSharedInformerFactory, Resources } from "../../../client/informers/factory.ts";
import type { Clientset } from "../../../client/kubernetes/clientset.ts";
import type { SharedInformerFactory } from "../../../client/tools/cache/informer-factory.ts";
import {
  KubernetesPodNameLabel,
  KubernetesPodNamespaceLabel,
  KubernetesPodUIDLabel,
} from "../../../kubelet/runtime/cri.ts";
import { type ContainerRecord, isSameProcess, readRecords } from "../../../kubelet/runtime/process-state.ts";
import type { CacheComparison, LeaseObservation, LiveContainer, PodSighting } from "./invariants.ts";

export interface ObserverOptions {
  /** The workload's namespace: pods, ReplicaSets and Deployments are watched there. */
  namespace: string;
  /** The leader-election Leases of kube-system to record. */
  leases: string[];
  kubelets: () => { node: string; rootDir: string }[];
}

const key = (o: KubeObject) => `${o.metadata.namespace ?? ""}/${o.metadata.name ?? ""}`;
const version = (o: KubeObject) => `${o.metadata.uid}@${o.metadata.resourceVersion}`;
const ms = (t: string | undefined) => (t ? Date.parse(t) : undefined);

export class Observers {
  readonly sightings: PodSighting[] = [];
  readonly leaseObservations: LeaseObservation[] = [];
  private readonly seen = new Set<string>();
  private readonly workload: SharedInformerFactory;
  private readonly system: SharedInformerFactory;
  private readonly watched: {
    resource: GroupVersionResource;
    namespace: string;
    factory: SharedInformerFactory;
  }[];
  private readonly abort = new AbortController();
  private timer?: NodeJS.Timeout;

  constructor(
    private readonly client: Clientset,
    private readonly o: ObserverOptions,
  ) {
    this.workload = newSharedInformerFactory(client, 0, { namespace: o.namespace });
    this.system = newSharedInformerFactory(client, 0, { namespace: "kube-system" });
    this.watched = [
      { resource: Resources.pods, namespace: o.namespace, factory: this.workload },
      { resource: Resources.replicaSets, namespace: o.namespace, factory: this.workload },
      { resource: Resources.deployments, namespace: o.namespace, factory: this.workload },
      { resource: Resources.leases, namespace: "kube-system", factory: this.system },
    ];
  }

  // #region observe
  /** Starts the informers and the kubelet-record poll; resolves once the caches have synced. */
  async start(): Promise<void> {
    const pods = this.workload.informerFor(Resources.pods);
    const onPod = (p: Pod) => {
      if (p.spec.nodeName)
        this.sight({
          uid: p.metadata.uid ?? "",
          pod: key(p),
          node: p.spec.nodeName,
          at: Date.now(),
          source: "api",
        });
    };
    pods.addEventHandler({ onAdd: (p) => onPod(p as Pod), onUpdate: (_, p) => onPod(p as Pod) });
    const onLease = (l: Lease) => {
      if (!this.o.leases.includes(l.metadata.name ?? "")) return;
      this.leaseObservations.push({
        lease: l.metadata.name ?? "",
        holder: l.spec?.holderIdentity ?? "",
        acquireTime: ms(l.spec?.acquireTime),
        renewTime: ms(l.spec?.renewTime),
        leaseDurationMs: (l.spec?.leaseDurationSeconds ?? 0) * 1000,
        transitions: l.spec?.leaseTransitions ?? 0,
      });
    };
    this.system
      .informerFor(Resources.leases)
      .addEventHandler({ onAdd: (l) => onLease(l as Lease), onUpdate: (_, l) => onLease(l as Lease) });
    for (const w of this.watched) w.factory.informerFor(w.resource);
    this.workload.start(this.abort.signal);
    this.system.start(this.abort.signal);
    this.timer = setInterval(() => this.pollKubelets(), 500);
    await this.workload.waitForCacheSync(this.abort.signal);
    await this.system.waitForCacheSync(this.abort.signal);
  }
  // #endregion observe

  private sight(s: PodSighting): void {
    const k = `${s.uid} ${s.node} ${s.source}`;
    if (this.seen.has(k)) return;
    this.seen.add(k);
    this.sightings.push(s);
  }

  /** Every container process alive now, by the kubelets' records (and notes each as a sighting). */
  liveContainers(): LiveContainer[] {
    const out: LiveContainer[] = [];
    for (const { node, rootDir } of this.o.kubelets()) {
      for (const rec of readRecords<ContainerRecord>(join(rootDir, "runtime", "containers"))) {
        if (!isSameProcess(rec.pid, rec.startToken)) continue;
        const labels = rec.status.labels ?? {};
        out.push({
          node,
          podUid: labels[KubernetesPodUIDLabel] ?? "",
          pod: `${labels[KubernetesPodNamespaceLabel] ?? ""}/${labels[KubernetesPodNameLabel] ?? ""}`,
          containerId: rec.status.id,
          pid: rec.pid ?? 0,
        });
      }
    }
    return out;
  }

  private pollKubelets(): void {
    for (const c of this.liveContainers())
      this.sight({ uid: c.podUid, pod: c.pod, node: c.node, at: Date.now(), source: "kubelet" });
  }

  /** Each informer's store against a fresh LIST of the same resource, by key → uid@resourceVersion. */
  async compareCaches(fresh: Clientset): Promise<CacheComparison[]> {
    const out: CacheComparison[] = [];
    for (const w of this.watched) {
      const list = await fresh
        .resource(w.resource, w.namespace)
        .list({ signal: AbortSignal.timeout(10_000) });
      const cached = new Map<string, string>();
      for (const obj of w.factory.informerFor(w.resource).getStore().list())
        cached.set(key(obj), version(obj));
      out.push({
        resource: w.resource.resource,
        cached,
        fresh: new Map(list.items.map((obj) => [key(obj), version(obj)])),
      });
    }
    return out;
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.abort.abort();
    await Promise.all([this.workload.shutdown(), this.system.shutdown()]);
    this.client.closeIdleConnections();
  }
}
