// Exercise 8.5: a chaos invariant of your own — a rollout never asks for more pods than maxSurge
// allows. See README.md.
import type { Deployment, ReplicaSet } from "../../../code/api/apps.ts";
import type { Pod } from "../../../code/api/core.ts";
import type { InvariantResult } from "../../../code/cmd/cluster/chaos/invariants.ts";

type EventType = "ADDED" | "MODIFIED" | "DELETED";

/**
 * One change an observer's informer delivered, in the order it was delivered: `ADDED`, `MODIFIED`
 * (the object as it is now) or `DELETED` (its last known state). `at` is when it was seen (ms).
 * Deployments, ReplicaSets and Pods come from three watches of one namespace, interleaved as they
 * arrived.
 */
export type Observation =
  | { at: number; type: EventType; kind: "Deployment"; object: Deployment }
  | { at: number; type: EventType; kind: "ReplicaSet"; object: ReplicaSet }
  | { at: number; type: EventType; kind: "Pod"; object: Pod };

/**
 * The invariant: at no point of the recording did Deployment `name`'s ReplicaSets ask for more
 * pods than `spec.replicas + maxSurge` (see README.md). Returns the same shape as the chaos run's
 * own invariants (code/cmd/cluster/chaos/invariants.ts): `ok`, and one `evidence` line per finding.
 */
export function neverAboveMaxSurge(name: string, observations: Observation[]): InvariantResult {
  throw new Error(`TODO: judge deployment ${name} over ${observations.length} observations`);
}
