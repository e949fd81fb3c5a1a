/**
 * ImageLocality — Score: prefer the node that already has the pod's images, by their size,
 * discounted when the image is on only a few nodes.
 *
 * @upstream kubernetes/kubernetes pkg/scheduler/framework/plugins/imagelocality/image_locality.go (ImageLocality, Score, calculatePriority, sumImageScores, scaledImageScore, normalizedImageName, minThreshold, maxContainerThreshold)
 * @chapter 05-scheduler
 *
 * Solves: pulling a 1 GB image can take longer than the pod then runs. A node that has it
 * starts the pod at once. But scoring the bare size would pile every replica on the one node
 * that pulled the image first ("node heating"), so each image counts size × (nodes with it /
 * all nodes): an image everywhere says nothing new, an image on one node of a hundred little.
 *
 * Invariants:
 * - sum = Σ over init and regular containers whose image the node has of
 *   trunc(size × numNodes / totalNodes); images are matched by name with ":latest" added when
 *   the name has no tag.
 * - the sum is clamped to [23 MiB, 1000 MiB × number of containers] and mapped linearly onto
 *   0–100 with integer division; no NormalizeScore (the score is already 0–100).
 * - a pod whose images no node has scores 0 everywhere.
 */
import type { Container, Pod } from "../../../api/core.ts";
import type { CycleState } from "../../framework/cycle-state.ts";
import { MaxNodeScore, type ScoreExtensions, type ScorePlugin } from "../../framework/interface.ts";
import type { NodeInfo } from "../../framework/node-info.ts";
import type { Handle } from "../../framework/runtime/registry.ts";
import type { Status } from "../../framework/status.ts";
import type { ImageStateSummary } from "../../framework/types.ts";

export const Name = "ImageLocality";

// #region thresholds
/** Bounds of the score's range: roughly the 90th percentile of compressed image sizes. */
const mb = 1024 * 1024;
export const minThreshold = 23 * mb;
export const maxContainerThreshold = 1000 * mb;
// #endregion thresholds

// #region score
/** calculatePriority: the clamped sum mapped onto 0–100; the ceiling grows with the container count. */
export function calculatePriority(sumScores: number, numContainers: number): number {
  const maxThreshold = maxContainerThreshold * numContainers;
  const s = Math.min(Math.max(sumScores, minThreshold), maxThreshold);
  return Math.trunc((MaxNodeScore * (s - minThreshold)) / (maxThreshold - minThreshold));
}

/** scaledImageScore: the image's size times the fraction of nodes that have it. */
export function scaledImageScore(state: ImageStateSummary, totalNumNodes: number): number {
  const spread = state.numNodes / totalNumNodes;
  return Math.trunc(state.size * spread);
}

/** normalizedImageName: the CRI's name for an untagged image — "nginx" is "nginx:latest". */
export function normalizedImageName(name: string): string {
  // A ":" before the last "/" is a registry port (localhost:5000/app), not a tag.
  return name.lastIndexOf(":") <= name.lastIndexOf("/") ? `${name}:latest` : name;
}

export function sumImageScores(nodeInfo: NodeInfo, pod: Pod, totalNumNodes: number): number {
  let sum = 0;
  const add = (containers: Container[] | undefined) => {
    for (const c of containers ?? []) {
      const state = nodeInfo.imageStates.get(normalizedImageName(c.image ?? ""));
      if (state) sum += scaledImageScore(state, totalNumNodes);
    }
  };
  add(pod.spec.initContainers);
  add(pod.spec.containers);
  return sum;
}
// #endregion score

export class ImageLocality implements ScorePlugin {
  constructor(private readonly handle: Handle) {}

  name(): string {
    return Name;
  }

  score(_state: CycleState, pod: Pod, nodeInfo: NodeInfo): [number, Status | undefined] {
    // Every node in the snapshot, not just the feasible ones: the spread is cluster-wide.
    const totalNumNodes = this.handle.snapshotSharedLister().list().length;
    const sum = sumImageScores(nodeInfo, pod, totalNumNodes);
    const numContainers = (pod.spec.initContainers?.length ?? 0) + pod.spec.containers.length;
    return [calculatePriority(sum, numContainers), undefined];
  }

  scoreExtensions(): ScoreExtensions | undefined {
    return undefined;
  }
}
