/**
 * Exercise: the node lifecycle controller's verdict on one node — has its kubelet shown a sign of
 * life (a new status, a renewed Lease) within the grace period, measured on the controller's clock?
 *
 * - `nodeHealthVerdict(saved, node, leaseRenewTime, now, grace)`: what to remember, and overdue or not.
 *
 * README.md has the rules. The test runs it inside the course's real node lifecycle controller.
 */
import type { Node } from "../../../code/api/core.ts";
import type {
  GracePeriods,
  NodeHealthData,
  NodeHealthVerdict,
} from "../../../code/controllers/nodelifecycle/node-health.ts";

export function nodeHealthVerdict(
  saved: NodeHealthData | undefined,
  node: Node,
  leaseRenewTime: number | undefined,
  now: number,
  grace: GracePeriods,
): NodeHealthVerdict {
  throw new Error(
    `TODO: nodeHealthVerdict(${node.metadata.name}, seen before: ${saved !== undefined}, lease ${leaseRenewTime}, at ${now}, grace ${grace.nodeMonitorGracePeriodMs} ms)`,
  );
}
