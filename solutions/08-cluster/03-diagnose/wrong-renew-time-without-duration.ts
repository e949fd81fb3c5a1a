// Mistake: a Lease counts as lapsed when its renewTime is more than 40 s old — the node Lease's
// default duration, remembered as "the" lease duration. Plausible, and it reads renewTime, the
// right field; but every Lease says for how long a renewal holds (leaseDurationSeconds): 15 s for
// the scheduler's and the controller-manager's, 10 s for this cluster's node Leases
// (nodeLeaseDurationSeconds). A component stopped 20 s ago has missed every renewal it had, and
// this version still calls it alive.
import type { Deployment, ReplicaSet } from "../../../code/api/apps.ts";
import type { Lease } from "../../../code/api/coordination.ts";
import type { Pod } from "../../../code/api/core.ts";
import type { Clientset } from "../../../code/client/kubernetes/clientset.ts";

export type Component = "kube-scheduler" | "kube-controller-manager" | "kubelet";

export interface Diagnosis {
  component: Component | "none";
  node?: string;
  evidence?: string;
}

/**
 * Why the Lease's holder is no longer alive, or undefined while its last renewal still holds.
 * Upstream's candidates ask the same question of a Lease (leaderelection.go, isLeaseValid) with
 * the time *they* observed the renewal; one look from outside has only renewTime, and the
 * machine's clock to compare it with — the components here share that clock.
 */
function lapsed(lease: Lease | undefined, now: number): string | undefined {
  if (!lease) return "no Lease at all (it never started, or never elected itself)";
  const spec = lease.spec ?? {};
  if (!spec.holderIdentity) return "a Lease that nobody holds";
  const renewed = Date.parse(spec.renewTime ?? spec.acquireTime ?? "");
  const durationMs = 40_000;
  if (Number.isNaN(renewed)) return "a Lease that was never renewed";
  if (now <= renewed + durationMs) return undefined;
  return `its Lease was last renewed ${((now - renewed) / 1000).toFixed(1)} s ago, and a renewal holds for ${durationMs / 1000} s`;
}

const isReady = (conditions: { type: string; status: string }[] | undefined) =>
  conditions?.find((c) => c.type === "Ready")?.status ?? "no";

/** What the namespace shows: the symptoms that point at each component. */
function symptoms(deployments: Deployment[], replicaSets: ReplicaSet[], pods: Pod[]) {
  const ownedBy = (uid: string | undefined) => (o: { metadata: { ownerReferences?: { uid: string }[] } }) =>
    o.metadata.ownerReferences?.some((r) => r.uid === uid) ?? false;
  return {
    // The Deployment controller has not looked (no ReplicaSet), or the ReplicaSet controller has
    // not made the pods asked for: the controller-manager.
    controllers: [
      ...deployments
        .filter((d) => (d.spec.replicas ?? 1) > 0 && !replicaSets.some(ownedBy(d.metadata.uid)))
        .map((d) => `Deployment ${d.metadata.name} has no ReplicaSet`),
      ...replicaSets
        .filter((rs) => pods.filter(ownedBy(rs.metadata.uid)).length < (rs.spec.replicas ?? 1))
        .map((rs) => `ReplicaSet ${rs.metadata.name} has fewer pods than it asks for`),
    ],
    // No node and no PodScheduled condition: no scheduler has even tried. (PodScheduled False,
    // reason Unschedulable, is a scheduler that tried and said why no node fits.)
    scheduler: pods
      .filter((p) => !p.spec?.nodeName && !p.status?.conditions?.some((c) => c.type === "PodScheduled"))
      .map((p) => `pod ${p.metadata.name} was never looked at by a scheduler`),
    // Bound to a node, and that node's kubelet has not started it, or not confirmed its deletion.
    kubelet: (node: string) =>
      pods
        .filter(
          (p) => p.spec?.nodeName === node && (p.status?.phase === "Pending" || p.metadata.deletionTimestamp),
        )
        .map(
          (p) =>
            `pod ${p.metadata.name} on ${node} is ${p.metadata.deletionTimestamp ? "stuck Terminating" : "not started"}`,
        ),
  };
}

const withSymptoms = (what: string, seen: string[]) =>
  seen.length > 0 ? `${what}; ${seen.join("; ")}` : what;

export async function diagnose(client: Clientset, namespace: string): Promise<Diagnosis> {
  const [nodes, nodeLeases, systemLeases, deployments, replicaSets, pods] = await Promise.all([
    client.coreV1.nodes().list(),
    client.coordinationV1.leases("kube-node-lease").list(),
    client.coordinationV1.leases("kube-system").list(),
    client.appsV1.deployments(namespace).list(),
    client.appsV1.replicaSets(namespace).list(),
    client.coreV1.pods(namespace).list(),
  ]);
  const now = Date.now();
  const seen = symptoms(deployments.items, replicaSets.items, pods.items);
  const systemLease = (name: string) => systemLeases.items.find((l) => l.metadata.name === name);

  // The controller-manager first: while it is down nothing new reaches the scheduler, so a quiet
  // scheduler proves nothing about the scheduler.
  const cm = lapsed(systemLease("kube-controller-manager"), now);
  if (cm) return { component: "kube-controller-manager", evidence: withSymptoms(cm, seen.controllers) };
  const scheduler = lapsed(systemLease("kube-scheduler"), now);
  if (scheduler) return { component: "kube-scheduler", evidence: withSymptoms(scheduler, seen.scheduler) };

  // Each node's heartbeat is its Lease in kube-node-lease, named after the node.
  for (const node of nodes.items) {
    const name = node.metadata.name ?? "";
    const why = lapsed(
      nodeLeases.items.find((l) => l.metadata.name === name),
      now,
    );
    if (why) {
      return {
        component: "kubelet",
        node: name,
        evidence: withSymptoms(
          `${why} (the Node still says Ready=${isReady(node.status?.conditions)})`,
          seen.kubelet(name),
        ),
      };
    }
  }
  // Every heartbeat holds: Pending pods here are young, or unschedulable (the scheduler said so).
  return { component: "none", evidence: "every Lease renewed within its duration" };
}
