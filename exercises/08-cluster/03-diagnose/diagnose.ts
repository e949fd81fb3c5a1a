// Exercise 8.3: which component of the cluster is broken, from what the API shows. See README.md.
import type { Clientset } from "../../../code/client/kubernetes/clientset.ts";

/** The components whose failure you must be able to name. */
export type Component = "kube-scheduler" | "kube-controller-manager" | "kubelet";

export interface Diagnosis {
  /** The broken component, or "none" when every component does its job. */
  component: Component | "none";
  /** With "kubelet": the node whose kubelet is broken. */
  node?: string;
  /** What you saw that says so, in a few words (the grader shows it beside its own reading). */
  evidence?: string;
}

/**
 * Looks at the cluster through `client` only (pods, events, Deployments, ReplicaSets, nodes, and
 * the Leases in kube-system and kube-node-lease) — the user's workloads are in `namespace` — and
 * says which component, if any, is broken. Read once and answer: do not wait for the cluster.
 */
export async function diagnose(client: Clientset, namespace: string): Promise<Diagnosis> {
  throw new Error(`TODO: diagnose the cluster behind ${typeof client} from namespace ${namespace}`);
}
