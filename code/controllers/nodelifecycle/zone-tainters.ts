/**
 * ZoneTainters — one NoExecute taint queue per zone, each at the rate its zone's health allows,
 * and the cluster-wide "master disruption mode" when every zone looks dead.
 * Mirrors kubernetes/kubernetes pkg/controller/nodelifecycle/node_lifecycle_controller.go
 * (zoneStates, zoneNoExecuteTainter, handleDisruption, setLimiterInZone, addPodEvictorForNewZone).
 *
 * Solves: the taint rate must follow the zone (zones.ts says why): `--node-eviction-rate` in a
 * Normal zone, the reduced rate (0 unless the cluster is large) in a PartialDisruption zone, and
 * nothing at all when every zone is FullDisruption — then the controller also lifts every
 * NoExecute taint (the caller does, told by `handleDisruption`'s answer), and when some node is
 * Ready again, every node gets a fresh grace period before it can be judged.
 *
 * Invariants:
 * - a zone has a state and a queue from the first node seen in it; a zone with no node left loses
 *   its state (its queue stays, as upstream's);
 * - the rates change only on a state change (or on entering or leaving disruption mode).
 *
 * @upstream kubernetes/kubernetes pkg/controller/nodelifecycle/node_lifecycle_controller.go (handleDisruption, setLimiterInZone, addPodEvictorForNewZone, HealthyQPSFunc, ReducedQPSFunc)
 * @chapter 07-kubelet
 */
import type { Node, NodeCondition } from "../../api/core.ts";
import type { Clock } from "../../client/util/clock.ts";
import { RateLimitedTimedQueue } from "./rate-limited-queue.ts";
import { computeZoneState, getZoneKey, reducedQPS, type ZoneState } from "./zones.ts";

export interface ZoneRates {
  /** --node-eviction-rate */
  evictionLimiterQPS: number;
  /** --secondary-node-eviction-rate */
  secondaryEvictionLimiterQPS: number;
  /** --large-cluster-size-threshold */
  largeClusterThreshold: number;
  /** --unhealthy-zone-threshold */
  unhealthyZoneThreshold: number;
}

/** What handleDisruption decided beyond the rates: the caller's part of the mode switch. */
export type DisruptionModeChange = "entered" | "exited" | undefined;

export class ZoneTainters {
  readonly zoneStates = new Map<string, ZoneState>();
  readonly zoneNoExecuteTainter = new Map<string, RateLimitedTimedQueue>();

  constructor(
    private readonly clock: Clock,
    private readonly rates: ZoneRates,
    private readonly log: (line: string) => void,
  ) {}

  /** addPodEvictorForNewZone: a state and a queue for the node's zone, if it has none yet. */
  addPodEvictorForNewZone(node: Node): void {
    const zone = getZoneKey(node);
    if (!this.zoneStates.has(zone)) this.zoneStates.set(zone, "Initial");
    if (!this.zoneNoExecuteTainter.has(zone))
      this.zoneNoExecuteTainter.set(
        zone,
        new RateLimitedTimedQueue(this.clock, this.rates.evictionLimiterQPS),
      );
  }

  hasZone(node: Node): boolean {
    return this.zoneStates.has(getZoneKey(node));
  }

  tainterFor(node: Node): RateLimitedTimedQueue {
    this.addPodEvictorForNewZone(node);
    return this.zoneNoExecuteTainter.get(getZoneKey(node)) as RateLimitedTimedQueue;
  }

  // #region handle-disruption
  /** The zones' new states from their nodes' Ready conditions, and each zone's rate set to match. */
  handleDisruption(zoneToNodeConditions: Map<string, (NodeCondition | undefined)[]>): DisruptionModeChange {
    const newZoneStates = new Map<string, ZoneState>();
    let allAreFullyDisrupted = true;
    for (const [zone, conditions] of zoneToNodeConditions) {
      const [, state] = computeZoneState(conditions, this.rates.unhealthyZoneThreshold);
      if (state !== "FullDisruption") allAreFullyDisrupted = false;
      newZoneStates.set(zone, state);
      if (!this.zoneStates.has(zone)) this.zoneStates.set(zone, "Initial");
    }
    let allWasFullyDisrupted = true;
    for (const [zone, state] of [...this.zoneStates]) {
      if (!zoneToNodeConditions.has(zone)) {
        this.zoneStates.delete(zone);
        continue;
      }
      if (state !== "FullDisruption") {
        allWasFullyDisrupted = false;
        break;
      }
    }
    if (allAreFullyDisrupted && allWasFullyDisrupted) return undefined;
    const sizeOf = (zone: string) => zoneToNodeConditions.get(zone)?.length ?? 0;
    if (allAreFullyDisrupted) {
      // Every zone dead at once: more likely our network than every node. Stop all evictions.
      this.log(`I "Controller detected that all Nodes are not-Ready. Entering master disruption mode"`);
      for (const zone of this.zoneStates.keys()) {
        this.zoneNoExecuteTainter.get(zone)?.swapLimiter(0);
        this.zoneStates.set(zone, "FullDisruption");
      }
      return "entered";
    }
    if (allWasFullyDisrupted) {
      this.log(`I "Controller detected that some Nodes are Ready. Exiting master disruption mode"`);
      for (const zone of this.zoneStates.keys()) {
        const state = newZoneStates.get(zone) ?? "Normal";
        this.setLimiterInZone(zone, sizeOf(zone), state);
        this.zoneStates.set(zone, state);
      }
      return "exited";
    }
    for (const [zone, state] of this.zoneStates) {
      const next = newZoneStates.get(zone);
      if (!next || next === state) continue;
      this.log(`I "Controller detected that zone is now in new state" zone="${zone}" newState="${next}"`);
      this.setLimiterInZone(zone, sizeOf(zone), next);
      this.zoneStates.set(zone, next);
    }
    return undefined;
  }

  private setLimiterInZone(zone: string, zoneSize: number, state: ZoneState): void {
    const q = this.zoneNoExecuteTainter.get(zone);
    if (!q) return;
    // A fully disrupted zone in a cluster that is not: its nodes really are gone — evict normally.
    if (state === "Normal" || state === "FullDisruption") q.swapLimiter(this.rates.evictionLimiterQPS);
    else if (state === "PartialDisruption")
      q.swapLimiter(
        reducedQPS(zoneSize, this.rates.largeClusterThreshold, this.rates.secondaryEvictionLimiterQPS),
      );
  }
  // #endregion handle-disruption
}
