/**
 * LimitRanger — a namespace's LimitRanges give containers default requests and limits and hold
 * every container (and every pod as a whole) between a min and a max, with at most a given
 * limit-to-request ratio. Upstream: kubernetes plugin/pkg/admission/limitranger/admission.go.
 *
 * Solves:
 * - a container that states no resources is BestEffort: the scheduler gives it nothing and the
 *   kubelet evicts it first. A default request/limit per namespace makes every pod schedulable
 *   with a sane size, and makes `requests.cpu` quotas usable (quota insists on stated requests);
 * - one container may not ask for a whole node, or for a limit 100× its request (the node
 *   would be overcommitted far beyond what the scheduler believed).
 *
 * Invariants:
 * - admit (mutating) only fills in what a container left out, and records what it set in the
 *   annotation `kubernetes.io/limit-ranger` (`LimitRanger plugin set: cpu request for container web`);
 * - validate judges the final pod against every LimitRange of its namespace; all violations
 *   are reported at once (`[a, b]` when more than one, as Go's aggregate error);
 * - pods only, on create: a pod's resources cannot change afterwards, and updates of pods
 *   being deleted are ignored. PersistentVolumeClaims are not served here.
 *
 * @upstream kubernetes/kubernetes plugin/pkg/admission/limitranger/admission.go (LimitRanger.Admit, Validate, DefaultLimitRangerActions, defaultContainerResourceRequirements, mergeContainerResources, mergePodResourceRequirements, minConstraint, maxConstraint, limitRequestRatioConstraint, PodValidateLimitFunc)
 * @chapter 03-api-security
 */
import type { Container, LimitRange, Pod, ResourceList } from "../../../api/core.ts";
import {
  cmpQuantity,
  formatQuantity,
  parseQuantity,
  quantityMilliValue,
  zeroQuantity,
} from "../../../api/quantity.ts";
import { podResources } from "../../../quota/evaluator.ts";
import { newInternalError } from "../../errors.ts";
import type { PluginContext } from "../context.ts";
import { newAdmissionForbidden } from "../errors.ts";
import type { Attributes, MutationInterface, ValidationInterface } from "../interfaces.ts";

export const PluginName = "LimitRanger";
export const limitRangerAnnotation = "kubernetes.io/limit-ranger";

const q = (text: string | undefined) => parseQuantity(text ?? "0") ?? zeroQuantity();
const show = (text: string) => formatQuantity(q(text));

// #region defaults
/** defaultContainerResourceRequirements: the Container items' default and defaultRequest. */
export function defaultRequirements(lr: LimitRange): { requests: ResourceList; limits: ResourceList } {
  const requests: ResourceList = {};
  const limits: ResourceList = {};
  for (const item of lr.spec?.limits ?? []) {
    if (item.type !== "Container") continue;
    Object.assign(requests, item.defaultRequest ?? {});
    Object.assign(limits, item.default ?? {});
  }
  return { requests, limits };
}

/** mergeContainerResources: fill what the container left out; say what was set. */
function mergeContainer(
  c: Container,
  defaults: { requests: ResourceList; limits: ResourceList },
  kind: string,
  notes: string[],
): void {
  c.resources ??= {};
  const setLimits: string[] = [];
  const setRequests: string[] = [];
  for (const [name, v] of Object.entries(defaults.limits)) {
    c.resources.limits ??= {};
    if (!(name in c.resources.limits)) {
      c.resources.limits[name] = v;
      setLimits.push(name);
    }
  }
  for (const [name, v] of Object.entries(defaults.requests)) {
    c.resources.requests ??= {};
    if (!(name in c.resources.requests)) {
      c.resources.requests[name] = v;
      setRequests.push(name);
    }
  }
  if (setRequests.length > 0) notes.push(`${setRequests.sort().join(", ")} request for ${kind} ${c.name}`);
  if (setLimits.length > 0) notes.push(`${setLimits.sort().join(", ")} limit for ${kind} ${c.name}`);
}

export function mergePodResourceRequirements(
  pod: Pod,
  defaults: { requests: ResourceList; limits: ResourceList },
): void {
  const notes: string[] = [];
  for (const c of pod.spec.containers ?? []) mergeContainer(c, defaults, "container", notes);
  for (const c of pod.spec.initContainers ?? []) mergeContainer(c, defaults, "init container", notes);
  if (notes.length > 0) {
    pod.metadata.annotations = {
      ...pod.metadata.annotations,
      [limitRangerAnnotation]: `LimitRanger plugin set: ${notes.join("; ")}`,
    };
  }
}
// #endregion defaults

// #region constraints
export function minConstraint(
  type: string,
  name: string,
  enforced: string,
  req: ResourceList,
  lim: ResourceList,
): string | undefined {
  if (!(name in req))
    return `minimum ${name} usage per ${type} is ${show(enforced)}.  No request is specified`;
  if (cmpQuantity(q(req[name]), q(enforced)) < 0) {
    return `minimum ${name} usage per ${type} is ${show(enforced)}, but request is ${show(req[name])}`;
  }
  if (name in lim && cmpQuantity(q(lim[name]), q(enforced)) < 0) {
    return `minimum ${name} usage per ${type} is ${show(enforced)}, but limit is ${show(lim[name])}`;
  }
  return undefined;
}

export function maxConstraint(
  type: string,
  name: string,
  enforced: string,
  req: ResourceList,
  lim: ResourceList,
): string | undefined {
  if (!(name in lim)) return `maximum ${name} usage per ${type} is ${show(enforced)}.  No limit is specified`;
  if (cmpQuantity(q(lim[name]), q(enforced)) > 0) {
    return `maximum ${name} usage per ${type} is ${show(enforced)}, but limit is ${show(lim[name])}`;
  }
  if (name in req && cmpQuantity(q(req[name]), q(enforced)) > 0) {
    return `maximum ${name} usage per ${type} is ${show(enforced)}, but request is ${show(req[name])}`;
  }
  return undefined;
}

export function limitRequestRatioConstraint(
  type: string,
  name: string,
  enforced: string,
  req: ResourceList,
  lim: ResourceList,
): string | undefined {
  const r = quantityMilliValue(q(req[name]));
  const l = quantityMilliValue(q(lim[name]));
  if (!(name in req) || r === 0n) {
    return `${name} max limit to request ratio per ${type} is ${show(enforced)}, but no request is specified or request is 0`;
  }
  if (!(name in lim) || l === 0n) {
    return `${name} max limit to request ratio per ${type} is ${show(enforced)}, but no limit is specified or limit is 0`;
  }
  const ratio = Number(l) / Number(r);
  if (ratio * 1000 > Number(quantityMilliValue(q(enforced)))) {
    // Go's %f: six decimals.
    return `${name} max limit to request ratio per ${type} is ${show(enforced)}, but provided ratio is ${ratio.toFixed(6)}`;
  }
  return undefined;
}

/** PodValidateLimitFunc: every Container item against each container, every Pod item against the pod's totals. */
export function podValidateLimit(lr: LimitRange, pod: Pod): string[] {
  const errs: string[] = [];
  const check = (
    type: string,
    min: ResourceList,
    max: ResourceList,
    ratio: ResourceList,
    req: ResourceList,
    lim: ResourceList,
  ) => {
    for (const name of Object.keys(min).sort()) {
      const e = minConstraint(type, name, min[name], req, lim);
      if (e) errs.push(e);
    }
    for (const name of Object.keys(max).sort()) {
      const e = maxConstraint(type, name, max[name], req, lim);
      if (e) errs.push(e);
    }
    for (const name of Object.keys(ratio).sort()) {
      const e = limitRequestRatioConstraint(type, name, ratio[name], req, lim);
      if (e) errs.push(e);
    }
  };
  for (const item of lr.spec?.limits ?? []) {
    const [min, max, ratio] = [item.min ?? {}, item.max ?? {}, item.maxLimitRequestRatio ?? {}];
    if (item.type === "Container") {
      for (const c of [...(pod.spec.containers ?? []), ...(pod.spec.initContainers ?? [])]) {
        check("Container", min, max, ratio, c.resources?.requests ?? {}, c.resources?.limits ?? {});
      }
    } else if (item.type === "Pod") {
      check("Pod", min, max, ratio, podResources(pod, "requests"), podResources(pod, "limits"));
    }
  }
  return errs;
}
// #endregion constraints

/** DefaultLimitRangerActions.SupportsAttributes: pods, on create, not subresources. */
const supports = (a: Attributes) =>
  !a.subresource &&
  a.operation === "CREATE" &&
  a.kind.group === "" &&
  a.kind.kind === "Pod" &&
  a.object !== undefined;

// #region plugin
export function newLimitRanger(ctx: PluginContext): MutationInterface & ValidationInterface {
  const limitRanges = async (namespace: string): Promise<LimitRange[]> => {
    const store = ctx.store("", "limitranges");
    if (!store) throw newInternalError("LimitRanger: no limitranges store");
    return (await store.list(namespace, {})).items as LimitRange[];
  };
  return {
    name: PluginName,
    handles: (op) => op === "CREATE" || op === "UPDATE",
    async admit(a) {
      if (!supports(a)) return;
      for (const lr of await limitRanges(a.namespace)) {
        mergePodResourceRequirements(a.object as Pod, defaultRequirements(lr));
      }
    },
    async validate(a) {
      if (!supports(a)) return;
      const errs: string[] = [];
      for (const lr of await limitRanges(a.namespace)) errs.push(...podValidateLimit(lr, a.object as Pod));
      if (errs.length === 1) throw newAdmissionForbidden(a, errs[0]);
      if (errs.length > 1) throw newAdmissionForbidden(a, `[${errs.join(", ")}]`);
    },
  };
}
// #endregion plugin
