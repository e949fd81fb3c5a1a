/**
 * Covers — does one set of rules grant everything another grants? The heart of the
 * escalation check. Upstream: pkg/registry/rbac/validation/policy_comparator.go, with the
 * compaction of policy_compact.go and the message format of CompactString
 * (pkg/apis/rbac/v1/helpers.go).
 *
 * Solves: "may jane create a role with these rules?" is "does jane already hold every one of
 * them?". Rules cannot be compared whole (jane may hold `get pods` from one binding and
 * `list pods` from another), so each wanted rule is broken into atoms — one verb, one group,
 * one resource, at most one name, or one verb on one URL — and each atom must be covered by
 * one rule the owner holds.
 *
 * Invariants:
 * - an atom is covered by one owner rule or by none: the breakdown is so fine that no atom
 *   needs two owner rules together;
 * - an owner `*` covers anything in its place; an owner `*` + `/x` covers every resource's
 *   subresource `x`; an owner URL ending in `*` covers every URL with that prefix;
 * - an owner rule limited to resourceNames covers only atoms with one of those names — never
 *   an atom without a name (that would be every name).
 *
 * @upstream kubernetes/kubernetes pkg/registry/rbac/validation/policy_comparator.go (Covers, BreakdownRule, ruleCovers, resourceCoversAll, nonResourceURLCovers)
 * @upstream kubernetes/kubernetes pkg/registry/rbac/validation/policy_compact.go (CompactRules)
 * @upstream kubernetes/kubernetes pkg/apis/rbac/v1/helpers.go (CompactString)
 * @chapter 03-api-security
 */
import { APIGroupAll, type PolicyRule, ResourceAll, VerbAll } from "../../../api/rbac.ts";

// #region breakdown
/** BreakdownRule: one rule as its atoms (group × resource × verb [× name], and URL × verb). */
export function breakdownRule(rule: PolicyRule): PolicyRule[] {
  const atoms: PolicyRule[] = [];
  for (const group of rule.apiGroups ?? []) {
    for (const resource of rule.resources ?? []) {
      for (const verb of rule.verbs ?? []) {
        const names = rule.resourceNames ?? [];
        if (names.length === 0) atoms.push({ apiGroups: [group], resources: [resource], verbs: [verb] });
        for (const name of names) {
          atoms.push({ apiGroups: [group], resources: [resource], verbs: [verb], resourceNames: [name] });
        }
      }
    }
  }
  for (const url of rule.nonResourceURLs ?? []) {
    for (const verb of rule.verbs ?? []) atoms.push({ nonResourceURLs: [url], verbs: [verb] });
  }
  return atoms;
}
// #endregion breakdown

// #region rule-covers
const hasAll = (set: readonly string[] | undefined, wanted: readonly string[] | undefined): boolean =>
  (wanted ?? []).every((w) => (set ?? []).includes(w));

function resourceCoversAll(owned: readonly string[], wanted: readonly string[]): boolean {
  if (owned.includes(ResourceAll) || hasAll(owned, wanted)) return true;
  return wanted.every((path) => {
    if (owned.includes(path)) return true;
    const slash = path.indexOf("/");
    if (slash < 0) return false; // not a subresource: only `*` or itself covers it
    return owned.includes(`*/${path.slice(slash + 1)}`);
  });
}

function nonResourceURLCovers(owner: string, url: string): boolean {
  return owner === url || (owner.endsWith("*") && url.startsWith(owner.replace(/\*+$/, "")));
}

/** ruleCovers: does one owner rule cover one atom? */
export function ruleCovers(owner: PolicyRule, atom: PolicyRule): boolean {
  const verbs = owner.verbs ?? [];
  const groups = owner.apiGroups ?? [];
  const ownerNames = owner.resourceNames ?? [];
  const atomNames = atom.resourceNames ?? [];
  const verbOK = verbs.includes(VerbAll) || hasAll(verbs, atom.verbs);
  const groupOK = groups.includes(APIGroupAll) || hasAll(groups, atom.apiGroups);
  const resourceOK = resourceCoversAll(owner.resources ?? [], atom.resources ?? []);
  const urlOK = (atom.nonResourceURLs ?? []).every((u) =>
    (owner.nonResourceURLs ?? []).some((o) => nonResourceURLCovers(o, u)),
  );
  const nameOK =
    atomNames.length === 0
      ? ownerNames.length === 0
      : ownerNames.length === 0 || hasAll(ownerNames, atomNames);
  return verbOK && groupOK && resourceOK && nameOK && urlOK;
}
// #endregion rule-covers

// #region covers
/** Covers: true when the owner's rules grant every atom of `servant`; else the atoms missing. */
export function covers(
  ownerRules: readonly PolicyRule[],
  servantRules: readonly PolicyRule[],
): [boolean, PolicyRule[]] {
  const uncovered: PolicyRule[] = [];
  for (const atom of servantRules.flatMap(breakdownRule)) {
    if (!ownerRules.some((owner) => ruleCovers(owner, atom))) uncovered.push(atom);
  }
  return [uncovered.length === 0, uncovered];
}
// #endregion covers

// #region compact
/**
 * CompactRules: the atoms of one group and resource (and at most one name) merged back into
 * one rule with all their verbs, so the error lists `pods: [get list]`, not two lines.
 */
export function compactRules(rules: readonly PolicyRule[]): PolicyRule[] {
  const compacted: PolicyRule[] = [];
  const simple = new Map<string, PolicyRule>();
  for (const r of rules) {
    const names = r.resourceNames ?? [];
    const isSimple =
      names.length <= 1 &&
      (r.nonResourceURLs ?? []).length === 0 &&
      (r.apiGroups ?? []).length === 1 &&
      (r.resources ?? []).length === 1;
    if (!isSimple) {
      compacted.push(r);
      continue;
    }
    const key = JSON.stringify([r.apiGroups?.[0], r.resources?.[0], names[0] ?? null]);
    const existing = simple.get(key);
    if (!existing) {
      simple.set(key, structuredClone(r));
      continue;
    }
    for (const v of r.verbs ?? []) if (!existing.verbs.includes(v)) existing.verbs.push(v);
  }
  return [...compacted, ...simple.values()];
}

/** Go's %q of a []string: `["a" "b"]`. */
export const goQuoteList = (values: readonly string[]): string =>
  `[${values.map((v) => JSON.stringify(v)).join(" ")}]`;

/** CompactString: `{APIGroups:["apps"], Resources:["deployments"], Verbs:["create"]}`. */
export function compactString(r: PolicyRule): string {
  const parts: string[] = [];
  if (r.apiGroups?.length) parts.push(`APIGroups:${goQuoteList(r.apiGroups)}`);
  if (r.resources?.length) parts.push(`Resources:${goQuoteList(r.resources)}`);
  if (r.nonResourceURLs?.length) parts.push(`NonResourceURLs:${goQuoteList(r.nonResourceURLs)}`);
  if (r.resourceNames?.length) parts.push(`ResourceNames:${goQuoteList(r.resourceNames)}`);
  if (r.verbs?.length) parts.push(`Verbs:${goQuoteList(r.verbs)}`);
  return `{${parts.join(", ")}}`;
}
// #endregion compact
