/**
 * Node affinity matching — does a node satisfy a pod's `nodeSelector` and its node affinity
 * terms, and how many preferred-term weights does it collect?
 *
 * @upstream kubernetes/kubernetes staging/src/k8s.io/component-helpers/scheduling/corev1/nodeaffinity/nodeaffinity.go (NodeSelector, LazyErrorNodeSelector, NewNodeSelector, NewLazyErrorNodeSelector, PreferredSchedulingTerms, NewPreferredSchedulingTerms, RequiredNodeAffinity, GetRequiredNodeAffinity, nodeSelectorRequirementsAsSelector, nodeSelectorRequirementsAsFieldSelector)
 * @chapter 05-scheduler
 *
 * Solves: the scheduler's NodeAffinity plugin decides where a pod may go, and the kubelet's
 * admission later re-checks the same rules on the node it landed on. Both must agree to the
 * letter (a disagreement means a pod bound and then rejected), so the matching lives here, in
 * code/api, which both may import — not in the scheduler.
 *
 * Invariants:
 * - terms are ORed, the requirements inside a term ANDed; an empty term (no expressions, no
 *   fields) matches nothing and is dropped when parsed.
 * - `matchExpressions` match node labels with the label-selector operators (In, NotIn,
 *   Exists, DoesNotExist, Gt, Lt as integers); `matchFields` match node fields, of which
 *   only `metadata.name` exists, with In / NotIn of exactly one value.
 * - a term that fails to parse never matches. The lazy selector reports parse errors only
 *   when no other term matched (old pods with a bad term keep scheduling on their good terms);
 *   `newNodeSelector` and `newPreferredSchedulingTerms` refuse them outright.
 * - a preferred term with weight 0 is ignored.
 */
import type { Node, NodeSelectorRequirement, NodeSelectorTerm, Pod } from "./core.ts";
import {
  childPath,
  type FieldError,
  fieldErrorToString,
  goStringSlice,
  indexPath,
  invalid,
  notSupported,
} from "./field-errors.ts";
import {
  fail,
  type Labels,
  newRequirement,
  type Operator,
  ok,
  type Requirement,
  type Result,
  type Selector,
  selectorFromSet,
  selectorMatches,
  sortByKey,
} from "./labels.ts";

/** The node fields a `matchFields` requirement may name (`metav1.ObjectNameField`). */
export const ObjectNameField = "metadata.name";

/** The API's v1.NodeSelector (`requiredDuringSchedulingIgnoredDuringExecution`). */
export interface NodeSelectorSpec {
  nodeSelectorTerms: NodeSelectorTerm[];
}

export interface PreferredSchedulingTerm {
  weight: number;
  preference: NodeSelectorTerm;
}

// #region term
/** One field requirement: `metadata.name == value` or `!=`. */
interface FieldRequirement {
  key: string;
  equal: boolean;
  value: string;
}

/** A parsed term: a label selector, field requirements, or the errors that make it unusable. */
interface ParsedTerm {
  matchLabels?: Selector;
  matchFields?: FieldRequirement[];
  parseErrors: string[];
}

const labelOperators: Record<NodeSelectorRequirement["operator"], Operator> = {
  In: "in",
  NotIn: "notin",
  Exists: "exists",
  DoesNotExist: "!",
  Gt: "gt",
  Lt: "lt",
};
const validSelectorOperators = Object.keys(labelOperators);
const validFieldSelectorOperators = ["In", "NotIn"];

function isEmptyTerm(t: NodeSelectorTerm): boolean {
  return (t.matchExpressions?.length ?? 0) === 0 && (t.matchFields?.length ?? 0) === 0;
}

function parseTerm(t: NodeSelectorTerm, path: string): ParsedTerm {
  const term: ParsedTerm = { parseErrors: [] };
  if ((t.matchExpressions?.length ?? 0) > 0) {
    const p = childPath(path, "matchExpressions");
    const reqs: Requirement[] = [];
    t.matchExpressions!.forEach((e, i) => {
      const at = indexPath(p, i);
      const op = Object.hasOwn(labelOperators, e.operator) ? labelOperators[e.operator] : undefined;
      if (!op) {
        term.parseErrors.push(
          fieldErrorToString(notSupported(childPath(at, "operator"), e.operator, validSelectorOperators)),
        );
        return;
      }
      const r = newRequirement(e.key, op, e.values ?? [], at);
      if (r.ok) reqs.push(r.value);
      else term.parseErrors.push(r.error.message);
    });
    if (term.parseErrors.length === 0) term.matchLabels = { requirements: sortByKey(reqs) };
  }
  if ((t.matchFields?.length ?? 0) > 0) {
    const p = childPath(path, "matchFields");
    const reqs: FieldRequirement[] = [];
    const errors: FieldError[] = [];
    t.matchFields!.forEach((e, i) => {
      const at = indexPath(p, i);
      if (e.operator !== "In" && e.operator !== "NotIn") {
        errors.push(notSupported(childPath(at, "operator"), e.operator, validFieldSelectorOperators));
      } else if ((e.values?.length ?? 0) !== 1) {
        // One value only: a field selector compares with a single string (upstream's message).
        errors.push(invalid(childPath(at, "values"), goStringSlice(e.values), "must have one element"));
      } else {
        reqs.push({ key: e.key, equal: e.operator === "In", value: e.values![0] });
      }
    });
    term.parseErrors.push(...errors.map(fieldErrorToString));
    if (errors.length === 0) term.matchFields = reqs;
  }
  return term;
}

/** The fields a node offers to `matchFields`: its name, when it has one. */
function nodeFields(node: Node): Map<string, string> {
  const f = new Map<string, string>();
  if (node.metadata.name) f.set(ObjectNameField, node.metadata.name);
  return f;
}

/** A term's verdict: [matches, parse errors]. A node with no fields skips the field check, as upstream. */
function termMatches(t: ParsedTerm, labels: Labels, fields: Map<string, string>): [boolean, string[]] {
  if (t.parseErrors.length > 0) return [false, t.parseErrors];
  if (t.matchLabels && !selectorMatches(t.matchLabels, labels)) return [false, []];
  if (t.matchFields && fields.size > 0) {
    for (const r of t.matchFields) {
      const v = fields.get(r.key) ?? "";
      if ((v === r.value) !== r.equal) return [false, []];
    }
  }
  return [true, []];
}
// #endregion term

/** Upstream's flattened aggregate: one message alone, several as `[a, b]`. */
function aggregate(messages: string[]): string {
  const unique = [...new Set(messages)];
  return unique.length === 1 ? unique[0] : `[${unique.join(", ")}]`;
}

// #region node-selector
/** LazyErrorNodeSelector: a required node selector that reports parse errors only if nothing matched. */
export class LazyErrorNodeSelector {
  private readonly terms: ParsedTerm[];

  constructor(ns: NodeSelectorSpec, path = "") {
    const p = childPath(path, "nodeSelectorTerms");
    this.terms = [];
    (ns.nodeSelectorTerms ?? []).forEach((t, i) => {
      // An empty term selects nothing: it can never be the term that matches.
      if (!isEmptyTerm(t)) this.terms.push(parseTerm(t, indexPath(p, i)));
    });
  }

  /** [does any term match, the parse errors of the terms when none did]. */
  match(node: Node | undefined): [boolean, Error | undefined] {
    if (!node) return [false, undefined];
    const labels = node.metadata.labels ?? {};
    const fields = nodeFields(node);
    const errs: string[] = [];
    for (const t of this.terms) {
      const [m, e] = termMatches(t, labels, fields);
      if (e.length > 0) {
        errs.push(...e);
        continue;
      }
      if (m) return [true, undefined];
    }
    return [false, errs.length > 0 ? new Error(aggregate(errs)) : undefined];
  }

  /** Every term's parse errors (for the strict constructor). */
  parseErrors(): string[] {
    return this.terms.flatMap((t) => t.parseErrors);
  }
}

/** NodeSelector, strict: a selector with a bad term is refused when built. */
export class NodeSelector {
  private constructor(private readonly lazy: LazyErrorNodeSelector) {}

  static parse(ns: NodeSelectorSpec, path = ""): Result<NodeSelector> {
    const lazy = new LazyErrorNodeSelector(ns, path);
    const errs = lazy.parseErrors();
    if (errs.length > 0) return fail(aggregate(errs));
    return ok(new NodeSelector(lazy));
  }

  match(node: Node | undefined): boolean {
    return this.lazy.match(node)[0];
  }
}

/** NewNodeSelector: upstream's name for the strict parse. */
export const newNodeSelector = NodeSelector.parse;
// #endregion node-selector

// #region preferred
/** PreferredSchedulingTerms: weighted terms; a node's score is the sum of the weights it matches. */
export class PreferredSchedulingTerms {
  private constructor(private readonly terms: { term: ParsedTerm; weight: number }[]) {}

  static parse(terms: readonly PreferredSchedulingTerm[], path = ""): Result<PreferredSchedulingTerms> {
    const parsed: { term: ParsedTerm; weight: number }[] = [];
    const errs: string[] = [];
    terms.forEach((t, i) => {
      // Weight 0 adds nothing; an empty preference matches nothing: both are skipped.
      if (t.weight === 0 || isEmptyTerm(t.preference)) return;
      const term = parseTerm(t.preference, indexPath(path, i));
      if (term.parseErrors.length > 0) errs.push(...term.parseErrors);
      else parsed.push({ term, weight: t.weight });
    });
    if (errs.length > 0) return fail(aggregate(errs));
    return ok(new PreferredSchedulingTerms(parsed));
  }

  score(node: Node): number {
    const labels = node.metadata.labels ?? {};
    const fields = nodeFields(node);
    let score = 0;
    for (const { term, weight } of this.terms) {
      if (termMatches(term, labels, fields)[0]) score += weight;
    }
    return score;
  }
}

export const newPreferredSchedulingTerms = PreferredSchedulingTerms.parse;
// #endregion preferred

// #region required
/**
 * RequiredNodeAffinity: a pod's `nodeSelector` (every label must equal) AND its required node
 * affinity (any term). Either may be absent; both absent matches every node.
 */
export class RequiredNodeAffinity {
  constructor(
    private readonly labelSelector: Selector | undefined,
    private readonly nodeSelector: LazyErrorNodeSelector | undefined,
  ) {}

  match(node: Node): [boolean, Error | undefined] {
    if (this.labelSelector && !selectorMatches(this.labelSelector, node.metadata.labels ?? {})) {
      return [false, undefined];
    }
    if (this.nodeSelector) return this.nodeSelector.match(node);
    return [true, undefined];
  }
}

/** GetRequiredNodeAffinity: parses once; the lazy selector keeps old pods with a bad term working. */
export function getRequiredNodeAffinity(pod: Pod): RequiredNodeAffinity {
  const sel = pod.spec.nodeSelector;
  const labelSelector = sel && Object.keys(sel).length > 0 ? selectorFromSet(sel) : undefined;
  const required = pod.spec.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution;
  return new RequiredNodeAffinity(labelSelector, required ? new LazyErrorNodeSelector(required) : undefined);
}
// #endregion required
