/**
 * Zones and their health — how the node lifecycle controller tells "one node died" from "the
 * network to a whole zone (or to the control plane) is down".
 * Mirrors kubernetes/kubernetes pkg/controller/nodelifecycle/node_lifecycle_controller.go
 * (ZoneState, ComputeZoneState, HealthyQPSFunc, ReducedQPSFunc) and
 * staging/src/k8s.io/component-helpers/node/topology/helpers.go (GetZoneKey).
 *
 * Solves: evicting pods is only a good idea if they can run elsewhere. If every node of every
 * zone looks dead, the likelier story is that the control plane lost its network — evicting
 * everything would turn a blip into an outage — so evictions stop ("master disruption mode").
 * If a large share of one zone is dead, evictions there slow down (or stop in small clusters).
 *
 * Invariants:
 * - a zone is FullDisruption when none of its nodes is Ready (and it has some), PartialDisruption
 *   when more than 2 are not Ready and they are at least `unhealthyZoneThreshold` of it, else Normal;
 * - a node without region and zone labels is in the zone "" (one zone for a small cluster).
 *
 * @upstream kubernetes/kubernetes pkg/controller/nodelifecycle/node_lifecycle_controller.go (ZoneState, stateInitial, stateNormal, stateFullDisruption, statePartialDisruption, ComputeZoneState, HealthyQPSFunc, ReducedQPSFunc)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/component-helpers/node/topology/helpers.go (GetZoneKey)
 * @chapter 07-kubelet
 */
import type { Node, NodeCondition } from "../../api/core.ts";

export type ZoneState = "Initial" | "Normal" | "FullDisruption" | "PartialDisruption";

/** region + ":\0:" + zone (the NUL keeps "a:b" + "c" apart from "a" + "b:c"); "" without labels. */
export function getZoneKey(node: Node): string {
  const labels = node.metadata.labels ?? {};
  const zone =
    labels["topology.kubernetes.io/zone"] ?? labels["failure-domain.beta.kubernetes.io/zone"] ?? "";
  const region =
    labels["topology.kubernetes.io/region"] ?? labels["failure-domain.beta.kubernetes.io/region"] ?? "";
  if (!region && !zone) return "";
  return `${region}:\u0000:${zone}`;
}

// #region zone-state
/** [not-ready nodes, the zone's state] from the Ready conditions of its nodes. */
export function computeZoneState(
  readyConditions: readonly (NodeCondition | undefined)[],
  unhealthyZoneThreshold: number,
): [number, ZoneState] {
  let ready = 0;
  let notReady = 0;
  for (const c of readyConditions) {
    if (c?.status === "True") ready++;
    else notReady++;
  }
  if (ready === 0 && notReady > 0) return [notReady, "FullDisruption"];
  if (notReady > 2 && notReady / (notReady + ready) >= unhealthyZoneThreshold)
    return [notReady, "PartialDisruption"];
  return [notReady, "Normal"];
}
// #endregion zone-state

/** The eviction rate of a partially disrupted zone: the secondary rate in a large cluster, else 0. */
export function reducedQPS(
  zoneSize: number,
  largeClusterThreshold: number,
  secondaryEvictionLimiterQPS: number,
): number {
  return zoneSize > largeClusterThreshold ? secondaryEvictionLimiterQPS : 0;
}
