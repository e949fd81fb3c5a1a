/**
 * A ChaosTarget over chapter 7's LocalCluster (started with chapter 8's options: etcd as its own
 * process, fault proxies, leader election, the audit log, per-process tokens) — the chaos
 * runner's own test harness, until the cluster launcher implements the same interface.
 * No upstream counterpart: test harness.
 *
 * Also the audit policy a chaos run wants: the leader-election Leases' writes with their bodies
 * (who named which holder), and the leaders' writes — bindings, pod and ReplicaSet creates — at
 * Metadata (who wrote what).
 *
 * @upstream none — test harness
 * @chapter 08-cluster
 */
import { newForConfig } from "../../../client/kubernetes/clientset.ts";
import { buildConfigFromFlags } from "../../../client/tools/clientcmd/client-config.ts";
import type { LocalCluster } from "../../testing/local-cluster.ts";
import type { ChaosTarget } from "./target.ts";

export const chaosAuditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
- level: Request
  verbs: [create, update, patch, delete]
  namespaces: [kube-system]
  resources: [{group: coordination.k8s.io, resources: [leases]}]
- level: Metadata
  verbs: [create]
  resources: [{group: "", resources: [pods, pods/binding]}, {group: apps, resources: [replicasets]}]
- level: None
`;

export function localClusterTarget(c: LocalCluster): ChaosTarget {
  return {
    components: () =>
      [...c.components.values()].map((x) => ({ name: x.name, kind: x.kind, pid: x.process.child.pid ?? 0 })),
    kill: (name) => c.killComponent(name),
    pause: async (name) => c.pauseComponent(name),
    resume: async (name) => c.resumeComponent(name),
    restart: (name) => c.restartComponent(name),
    partition: async (name, on) => c.partitionComponent(name, on),
    admin: c.admin,
    leaderIdentity: (name) => c.leaderIdentity(name),
    audit: () => c.audit(),
    kubeletRootDirs: () => [...c.kubelets.values()].map((k) => ({ node: k.name, rootDir: k.rootDir })),
    newClient: () => newForConfig(buildConfigFromFlags("", c.adminKubeconfig, {})),
  };
}
