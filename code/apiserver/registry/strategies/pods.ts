/**
 * Pod strategy — what the API server does to a pod on create, update, status write and delete.
 * Upstream: kubernetes pkg/registry/core/pod/strategy.go.
 *
 * Solves:
 * - a new pod always starts `Pending` with its QoS class, whatever status the client sent:
 *   the status belongs to the kubelet, which fills it once the pod runs;
 * - a user's `kubectl apply` must not wipe the status the kubelet wrote, and the kubelet's
 *   status write must not change the spec: two writers, two halves;
 * - a pod with scheduling gates is visibly held back (`PodScheduled=False, SchedulingGated`)
 *   from the moment it exists, so `kubectl get` shows SchedulingGated rather than Pending;
 * - deleting a pod that runs on a node must give its containers time to stop: the pod gets a
 *   deletionTimestamp and stays until the kubelet confirms; a pod that never reached a node
 *   (or already finished) has nothing to stop and goes at once.
 *
 * Invariants:
 * - after prepareForCreate: status = {phase: "Pending", qosClass, [SchedulingGated condition]},
 *   where qosClass is the sent one if any (upstream's GetPodQOS), else computed;
 * - after prepareForUpdate: status = old status; after the status strategy's prepareForUpdate:
 *   spec, ownerReferences and deletionTimestamp = old ones, and qosClass is never lost;
 * - checkGracefulDelete settles a grace period >= 0: 0 for an unbound or terminal pod.
 *
 * What upstream does differently: DropDisabledPodFields (fields behind disabled feature gates)
 * and the AppArmor annotation/field skew are not modelled.
 *
 * @upstream kubernetes/kubernetes pkg/registry/core/pod/strategy.go (podStrategy, podStatusStrategy, PrepareForCreate, PrepareForUpdate, CheckGracefulDelete, ToSelectableFields, NodeNameTriggerFunc, applySchedulingGatedCondition, mutatePodAffinity)
 * @upstream kubernetes/kubernetes pkg/apis/core/v1/conversion.go (AddFieldLabelConversionsForPod)
 * @chapter 02-apiserver
 */

import type { Pod, PodAffinityTerm, PodCondition } from "../../../api/core.ts";
import type { LabelSelector } from "../../../api/labels.ts";
import type { KubeObject } from "../../../api/meta.ts";
import type { GracefulDeleteOptions, RESTStrategy } from "../strategy.ts";
import { baseStrategy, keepFromOld, objectMetaFieldsSet, statusStrategy } from "./helpers.ts";
import { computePodQOS } from "./pod-qos.ts";
import { validateStatusUpdate } from "./validation.ts";

/** Fields of the v1 pod this strategy reads that code/api/core.ts does not declare (yet). */
interface PodSpecExtras {
  schedulingGates?: { name: string }[];
}
type AffinityTermWithKeys = PodAffinityTerm & { matchLabelKeys?: string[]; mismatchLabelKeys?: string[] };

export const podReasonSchedulingGated = "SchedulingGated";

// #region prepare-for-create
function prepareForCreate(obj: KubeObject): void {
  const pod = obj as Pod;
  // Whatever the client sent, a new pod has not run anywhere yet. The QoS class is upstream's
  // GetPodQOS: a class already in the sent status is kept, otherwise it is computed.
  pod.status = { phase: "Pending", qosClass: pod.status?.qosClass || computePodQOS(pod) };
  applySchedulingGatedCondition(pod);
  mutatePodAffinity(pod);
}

/** A gated pod is born with PodScheduled=False/SchedulingGated, so every client sees why it waits. */
export function applySchedulingGatedCondition(pod: Pod): void {
  const gates = (pod.spec as PodSpecExtras | undefined)?.schedulingGates ?? [];
  if (gates.length === 0) return;
  pod.status ??= {};
  const conditions: PodCondition[] = pod.status.conditions ?? [];
  if (conditions.some((c) => c.type === "PodScheduled")) return;
  pod.status.conditions = conditions;
  conditions.push({
    type: "PodScheduled",
    status: "False",
    reason: podReasonSchedulingGated,
    message: "Scheduling is blocked due to non-empty scheduling gates",
  });
}

/**
 * matchLabelKeys / mismatchLabelKeys (MatchLabelKeysInPodAffinity, on by default since v1.31):
 * the pod's own value for each key becomes an `In` / `NotIn` expression of the term's selector,
 * so "co-locate with pods of my revision" is written once in a template and means the right
 * revision in every pod stamped from it.
 */
export function mutatePodAffinity(pod: Pod): void {
  const affinity = pod.spec?.affinity;
  if (!affinity) return;
  const labels = pod.metadata.labels ?? {};
  for (const group of [affinity.podAffinity, affinity.podAntiAffinity]) {
    if (!group) continue;
    const terms: AffinityTermWithKeys[] = [
      ...(group.requiredDuringSchedulingIgnoredDuringExecution ?? []),
      ...(group.preferredDuringSchedulingIgnoredDuringExecution ?? []).map((w) => w.podAffinityTerm),
    ];
    for (const term of terms) applyMatchLabelKeys(term, labels);
  }
}

function applyMatchLabelKeys(term: AffinityTermWithKeys, labels: Record<string, string>): void {
  // A nil selector matches nothing; adding expressions would make it match something.
  if (!term.labelSelector) return;
  const selector: LabelSelector = term.labelSelector;
  for (const [keys, operator] of [
    [term.matchLabelKeys, "In"],
    [term.mismatchLabelKeys, "NotIn"],
  ] as const) {
    for (const key of keys ?? []) {
      const value = labels[key];
      if (value === undefined) continue;
      selector.matchExpressions = [...(selector.matchExpressions ?? []), { key, operator, values: [value] }];
    }
  }
}
// #endregion prepare-for-create

// #region prepare-for-update
function prepareForUpdate(obj: KubeObject, old: KubeObject): void {
  // The status is the kubelet's: a write to the pod itself cannot change it.
  keepFromOld(obj, old, "status");
}

function prepareForStatusUpdate(obj: KubeObject, old: KubeObject): void {
  const pod = obj as Pod;
  const oldPod = old as Pod;
  pod.spec = structuredClone(oldPod.spec);
  // Upstream clears deletionTimestamp here and rest.BeforeUpdate puts the stored one back:
  // a status write can neither start nor cancel a deletion.
  if (old.metadata.deletionTimestamp === undefined) delete pod.metadata.deletionTimestamp;
  else pod.metadata.deletionTimestamp = old.metadata.deletionTimestamp;
  // Old kubelets corrupted ownerReferences through /status, breaking garbage collection.
  if (old.metadata.ownerReferences === undefined) delete pod.metadata.ownerReferences;
  else pod.metadata.ownerReferences = structuredClone(old.metadata.ownerReferences);
  // QoS is fixed at creation; a kubelet that drops it must not erase it.
  if (!pod.status?.qosClass && oldPod.status?.qosClass) {
    pod.status ??= {};
    pod.status.qosClass = oldPod.status.qosClass;
  }
}
// #endregion prepare-for-update

// #region check-graceful-delete
/**
 * A pod on a node is deleted gracefully: the grace period is the request's, else the pod's
 * terminationGracePeriodSeconds, else 0. An unbound or finished pod has nothing to stop, so its
 * period is 0 — delete now. A negative period means "as soon as possible", which is 1s.
 */
export function checkGracefulDelete(obj: KubeObject, options: GracefulDeleteOptions): boolean {
  const pod = obj as Pod;
  let period = options.gracePeriodSeconds ?? pod.spec?.terminationGracePeriodSeconds ?? 0;
  if (!pod.spec?.nodeName) period = 0;
  const phase = pod.status?.phase;
  if (phase === "Failed" || phase === "Succeeded") period = 0;
  if (period < 0) period = 1;
  options.gracePeriodSeconds = period;
  return true;
}
// #endregion check-graceful-delete

// #region selectable-fields
export function podSelectableFields(obj: KubeObject): Record<string, string> {
  const pod = obj as Partial<Pod>;
  const spec = pod.spec;
  const status = pod.status;
  return {
    ...objectMetaFieldsSet(obj, true),
    "spec.nodeName": spec?.nodeName ?? "",
    "spec.restartPolicy": spec?.restartPolicy ?? "",
    "spec.schedulerName": spec?.schedulerName ?? "",
    "spec.serviceAccountName": spec?.serviceAccountName ?? "",
    "spec.hostNetwork": String(spec?.hostNetwork ?? false),
    "status.phase": status?.phase ?? "",
    // Upstream keeps only podIPs internally; podIP is its first entry.
    "status.podIP": status?.podIPs?.[0]?.ip ?? status?.podIP ?? "",
    "status.nominatedNodeName": status?.nominatedNodeName ?? "",
  };
}
// #endregion selectable-fields

/**
 * NodeNameTriggerFunc: pods' index in the watch cache — each kubelet watches its node's pods
 * (`spec.nodeName=<node>`), and the cacher offers a pod's events only to that node's watchers.
 */
export const nodeNameTriggerFunc = {
  indexName: "spec.nodeName",
  indexerFunc: (obj: KubeObject): string => (obj as Partial<Pod>).spec?.nodeName ?? "",
};

const base = baseStrategy(true);

export const podStrategy: RESTStrategy = {
  ...base,
  prepareForCreate,
  prepareForUpdate,
  allowCreateOnUpdate: false,
  allowUnconditionalUpdate: true,
  selectableFields: podSelectableFields,
  fieldLabels: [
    "metadata.name",
    "metadata.namespace",
    "spec.nodeName",
    "spec.restartPolicy",
    "spec.schedulerName",
    "spec.serviceAccountName",
    "spec.hostNetwork",
    "status.phase",
    "status.podIP",
    "status.podIPs",
    "status.nominatedNodeName",
  ],
  // Old v1 clients still send spec.host.
  fieldLabelAliases: { "spec.host": "spec.nodeName" },
  checkGracefulDelete,
};

podStrategy.status = statusStrategy(podStrategy, {
  prepareForUpdate: prepareForStatusUpdate,
  validateUpdate: validateStatusUpdate,
});
