/**
 * NodeTree — node names grouped by zone, listed round-robin across zones: the order the
 * scheduler walks nodes in.
 *
 * @upstream kubernetes/kubernetes pkg/scheduler/backend/cache/node_tree.go (nodeTree, addNode, removeNode, updateNode, list)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/component-helpers/node/topology/helpers.go (GetZoneKey)
 * @chapter 05-scheduler
 *
 * Solves: the scheduler stops looking once it has found enough feasible nodes
 * (numFeasibleNodesToFind). Walking nodes zone by zone would fill that quota from the first
 * zone and pile every pod there; interleaving zones spreads the nodes examined — and so the
 * pods placed — across zones.
 *
 * Invariants:
 * - `zones` lists each zone with at least one node, in the order it first appeared; a zone
 *   that loses its last node is removed.
 * - `list()` returns every node once: the first node of each zone, then the second of each, …
 */
import type { Node } from "../../../api/core.ts";

/** GetZoneKey: "region:\0:zone" from the topology (or legacy failure-domain) labels; "" if neither. */
export function getZoneKey(node: Node): string {
  const labels = node.metadata.labels;
  if (!labels) return "";
  const zone =
    labels["failure-domain.beta.kubernetes.io/zone"] ?? labels["topology.kubernetes.io/zone"] ?? "";
  const region =
    labels["failure-domain.beta.kubernetes.io/region"] ?? labels["topology.kubernetes.io/region"] ?? "";
  if (region === "" && zone === "") return "";
  // The NUL keeps "a:b" + "c" apart from "a" + "b:c".
  return `${region}:\x00:${zone}`;
}

export class NodeTree {
  readonly tree = new Map<string, string[]>();
  zones: string[] = [];
  numNodes = 0;

  constructor(nodes: Node[] = []) {
    for (const n of nodes) this.addNode(n);
  }

  addNode(n: Node): void {
    const zone = getZoneKey(n);
    const names = this.tree.get(zone);
    if (names) {
      if (names.includes(n.metadata.name ?? "")) return;
      names.push(n.metadata.name ?? "");
    } else {
      this.zones.push(zone);
      this.tree.set(zone, [n.metadata.name ?? ""]);
    }
    this.numNodes++;
  }

  removeNode(n: Node): Error | undefined {
    const zone = getZoneKey(n);
    const names = this.tree.get(zone);
    const i = names?.indexOf(n.metadata.name ?? "") ?? -1;
    if (!names || i < 0)
      return new Error(
        `node ${JSON.stringify(n.metadata.name)} in group ${JSON.stringify(zone)} was not found`,
      );
    names.splice(i, 1);
    if (names.length === 0) {
      this.tree.delete(zone);
      this.zones = this.zones.filter((z) => z !== zone);
    }
    this.numNodes--;
    return undefined;
  }

  /** updateNode: moves the node if its zone labels changed. */
  updateNode(old: Node | undefined, n: Node): void {
    if (old && getZoneKey(old) === getZoneKey(n)) return;
    if (old) this.removeNode(old);
    this.addNode(n);
  }

  // #region list
  list(): string[] {
    const out: string[] = [];
    for (let i = 0; out.length < this.numNodes; i++) {
      for (const zone of this.zones) {
        const names = this.tree.get(zone)!;
        if (i < names.length) out.push(names[i]);
      }
    }
    return out;
  }
  // #endregion list
}
