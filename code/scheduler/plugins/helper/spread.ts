/**
 * DefaultSelector — the label selector "the pods that belong with this one", deduced from the
 * Services that select the pod and the ReplicationController, ReplicaSet or StatefulSet that
 * controls it.
 *
 * @upstream kubernetes/kubernetes pkg/scheduler/framework/plugins/helper/spread.go (DefaultSelector, GetPodServices)
 * @chapter 05-scheduler
 *
 * Solves: default spreading (a pod without topologySpreadConstraints) must know which pods
 * to spread it away from, but the pod names none. Its Service and its controller already say
 * which pods are "the same app", so their selectors are used.
 *
 * Invariants:
 * - every Service in the pod's namespace whose selector matches the pod contributes its
 *   selector (merged as a label set: they all match the pod, so they cannot conflict); a
 *   Service without a selector matches nothing.
 * - only the pod's controller owner counts (ownerReferences[].controller); an RC contributes
 *   its map selector, an RS or StatefulSet the requirements of its LabelSelector.
 * - no listers (a simulation without informers): the empty selector, as upstream with empty
 *   listers — and an empty selector means "no default constraints" to the caller.
 */
import type { Pod } from "../../../api/core.ts";
import {
  type LabelSelector,
  labelSelectorAsSelector,
  type Selector,
  selectorFromSet,
  selectorMatches,
  sortByKey,
} from "../../../api/labels.ts";
import type { KubeObject } from "../../../api/meta.ts";

/** What DefaultSelector reads of each kind: only its selector. */
export interface MapSelectorObject extends KubeObject {
  spec?: { selector?: Record<string, string> };
}
export interface LabelSelectorObject extends KubeObject {
  spec?: { selector?: LabelSelector };
}

/** A namespaced lister: the course's Lister.byNamespace(ns) answers this shape. */
export interface NamespacedLister<T> {
  byNamespace(namespace: string): { list(): T[]; get(name: string): T | undefined };
}

/** The four listers upstream's plugin takes from the informer factory. */
export interface SpreadListers {
  services: NamespacedLister<MapSelectorObject>;
  /** Absent while the API server does not serve the resource (ReplicationControllers, StatefulSets). */
  replicationControllers?: NamespacedLister<MapSelectorObject>;
  replicaSets: NamespacedLister<LabelSelectorObject>;
  statefulSets?: NamespacedLister<LabelSelectorObject>;
}

// #region default-selector
export function defaultSelector(pod: Pod, listers: SpreadListers | undefined): Selector {
  if (!listers) return selectorFromSet({});
  const ns = pod.metadata.namespace ?? "";
  let labelSet: Record<string, string> = {};
  for (const svc of getPodServices(listers, pod)) labelSet = { ...labelSet, ...svc.spec?.selector };
  let selector = selectorFromSet(labelSet);

  const owner = pod.metadata.ownerReferences?.find((o) => o.controller === true);
  if (!owner) return selector;
  const kind = `${owner.apiVersion}/${owner.kind}`;
  if (kind === "v1/ReplicationController") {
    const rc = listers.replicationControllers?.byNamespace(ns).get(owner.name);
    if (rc) selector = selectorFromSet({ ...labelSet, ...rc.spec?.selector });
  } else if (kind === "apps/v1/ReplicaSet" || kind === "apps/v1/StatefulSet") {
    const lister = kind === "apps/v1/ReplicaSet" ? listers.replicaSets : listers.statefulSets;
    const obj = lister?.byNamespace(ns).get(owner.name);
    const other = obj ? labelSelectorAsSelector(obj.spec?.selector) : undefined;
    // A selector that selects nothing has no requirements to add (upstream: Requirements() not ok).
    if (other?.ok && !other.value.selectsNothing) {
      selector = { requirements: sortByKey([...selector.requirements, ...other.value.requirements]) };
    }
  }
  return selector;
}

/** GetPodServices: the Services of the pod's namespace whose selector matches the pod. */
export function getPodServices(listers: SpreadListers, pod: Pod): MapSelectorObject[] {
  return listers.services
    .byNamespace(pod.metadata.namespace ?? "")
    .list()
    .filter((svc) => {
      // A Service with no selector is managed by hand (its Endpoints): it selects no pods.
      if (svc.spec?.selector === undefined) return false;
      return selectorMatches(selectorFromSet(svc.spec.selector), pod.metadata.labels ?? {});
    });
}
// #endregion default-selector
