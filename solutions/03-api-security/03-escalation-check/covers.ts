// The reference answer, in the steps README.md's rules are made of. The course's own escalation
// check decides the same in code/apiserver/authz/rbac/policy-comparator.ts (region covers), for
// every role or binding a user without `escalate` or `bind` writes.
//
// A recorded mistake next to this file (wrong-*.ts) is this answer with one step done wrong: it
// builds its covers with `coversWith({ ...reference, <step> })`.
import type { PolicyRule } from "../../../code/api/rbac.ts";

export interface CoversSteps {
  /** One servant rule as its atoms. */
  breakdown(rule: PolicyRule): PolicyRule[];
  /** Does the owner's rule grant the atom's resource? */
  resourceCovered(owned: readonly string[], resource: string): boolean;
  /** Does the owner's URL grant the atom's URL? */
  urlCovered(owned: string, url: string): boolean;
  /** Do the owner's resourceNames cover the atom's (each list possibly empty)? */
  namesCovered(owned: readonly string[], names: readonly string[]): boolean;
}

const has = (set: readonly string[] | undefined, v: string) => (set ?? []).includes(v);

export const reference: CoversSteps = {
  breakdown(rule) {
    const atoms: PolicyRule[] = [];
    for (const g of rule.apiGroups ?? [])
      for (const r of rule.resources ?? [])
        for (const v of rule.verbs ?? []) {
          const names = rule.resourceNames ?? [];
          if (names.length === 0) atoms.push({ verbs: [v], apiGroups: [g], resources: [r] });
          for (const n of names)
            atoms.push({ verbs: [v], apiGroups: [g], resources: [r], resourceNames: [n] });
        }
    for (const u of rule.nonResourceURLs ?? [])
      for (const v of rule.verbs ?? []) atoms.push({ verbs: [v], nonResourceURLs: [u] });
    return atoms;
  },
  resourceCovered(owned, resource) {
    if (owned.includes("*") || owned.includes(resource)) return true;
    const slash = resource.indexOf("/");
    return slash >= 0 && owned.includes(`*/${resource.slice(slash + 1)}`);
  },
  urlCovered: (owned, url) => owned === url || (owned.endsWith("*") && url.startsWith(owned.slice(0, -1))),
  namesCovered: (owned, names) =>
    names.length === 0 ? owned.length === 0 : owned.length === 0 || names.every((n) => owned.includes(n)),
};

/** The exercise's function, made of `step`. */
export function coversWith(step: CoversSteps) {
  const ruleCovers = (owner: PolicyRule, atom: PolicyRule): boolean =>
    (has(owner.verbs, "*") || atom.verbs.every((v) => has(owner.verbs, v))) &&
    (has(owner.apiGroups, "*") || (atom.apiGroups ?? []).every((g) => has(owner.apiGroups, g))) &&
    (atom.resources ?? []).every((r) => step.resourceCovered(owner.resources ?? [], r)) &&
    (atom.nonResourceURLs ?? []).every((u) =>
      (owner.nonResourceURLs ?? []).some((o) => step.urlCovered(o, u)),
    ) &&
    step.namesCovered(owner.resourceNames ?? [], atom.resourceNames ?? []);

  return function covers(
    ownerRules: readonly PolicyRule[],
    servantRules: readonly PolicyRule[],
  ): [boolean, PolicyRule[]] {
    const missing = servantRules
      .flatMap((r) => step.breakdown(r))
      .filter((atom) => !ownerRules.some((o) => ruleCovers(o, atom)));
    return [missing.length === 0, missing];
  };
}

export const covers = coversWith(reference);
