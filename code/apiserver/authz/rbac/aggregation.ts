/**
 * ClusterRole aggregation — fill each ClusterRole that has an `aggregationRule` with the rules
 * of every ClusterRole its selectors match. Upstream this is a controller in
 * kube-controller-manager (pkg/controller/clusterroleaggregation); the course runs it inside
 * the API server for now, as a loop over the ClusterRole watch, because the controller
 * manager arrives in chapter 4 (which can move it there).
 *
 * Solves: `view`, `edit` and `admin` stay current as add-ons ship labelled roles
 * (`rbac.authorization.k8s.io/aggregate-to-view: "true"`), and custom resources become
 * viewable without anyone editing `view`.
 *
 * Invariants:
 * - the aggregated rules are the matching roles' rules, roles in name order, each rule once
 *   (an exact duplicate is dropped), the role itself excluded;
 * - a role is written only when its rules differ from that list, so the loop settles: writing
 *   `view` triggers `edit` (view is labelled aggregate-to-edit), which triggers `admin`, and
 *   then nothing changes;
 * - any ClusterRole change re-checks every aggregating role (upstream enqueues them all too).
 *
 * @upstream kubernetes/kubernetes pkg/controller/clusterroleaggregation/clusterroleaggregation_controller.go (syncClusterRole, ruleExists, enqueueAll)
 * @chapter 03-api-security
 */
import { type LabelSelector, labelSelectorAsSelector, selectorMatches } from "../../../api/labels.ts";
import type { ClusterRole, PolicyRule } from "../../../api/rbac.ts";
import type { Store } from "../../registry/store.ts";

// #region aggregate
/** syncClusterRole's rule list: what `role` should hold, given every ClusterRole there is. */
export function aggregatedRules(role: ClusterRole, all: readonly ClusterRole[]): PolicyRule[] {
  const rules: PolicyRule[] = [];
  const seen = new Set<string>();
  for (const s of role.aggregationRule?.clusterRoleSelectors ?? []) {
    const selector = labelSelectorAsSelector(s as LabelSelector);
    if (!selector.ok) continue;
    const matched = all
      .filter(
        (r) =>
          r.metadata.name !== role.metadata.name && selectorMatches(selector.value, r.metadata.labels ?? {}),
      )
      .sort((a, b) => (a.metadata.name ?? "").localeCompare(b.metadata.name ?? ""));
    for (const r of matched) {
      for (const rule of r.rules ?? []) {
        const key = JSON.stringify(rule);
        if (seen.has(key)) continue;
        seen.add(key);
        rules.push(rule);
      }
    }
  }
  return rules;
}
// #endregion aggregate

// #region aggregation-loop
/**
 * The loop: `kick()` after any ClusterRole event; syncs run one at a time, and kicks during a
 * sync coalesce into one more sync.
 */
export function newClusterRoleAggregator(store: Store, list: () => ClusterRole[]) {
  let running: Promise<void> | undefined;
  let again = false;
  async function syncAll(): Promise<void> {
    for (const role of list()) {
      if (!role.aggregationRule) continue;
      const rules = aggregatedRules(role, list());
      if (JSON.stringify(rules) === JSON.stringify(role.rules ?? [])) continue;
      await store
        .update("", role.metadata.name as string, (current) => {
          // Deleted meanwhile: a PUT would re-create it (RBAC allows create on update), so stop.
          if (!current) throw new Error("gone");
          const next = structuredClone(current) as ClusterRole;
          next.rules = rules;
          return next;
        })
        .catch(() => {}); // deleted meanwhile, or a conflict: the next event retries
    }
  }
  return {
    kick(): void {
      if (running) {
        again = true;
        return;
      }
      running = (async () => {
        do {
          again = false;
          await syncAll();
        } while (again);
        running = undefined;
      })();
    },
    /** Resolves when no sync is running (tests). */
    async idle(): Promise<void> {
      while (running) await running;
    },
  };
}
// #endregion aggregation-loop
