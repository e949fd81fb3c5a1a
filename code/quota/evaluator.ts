/**
 * Quota evaluators — what one object uses of a quota: a pod its compute requests and limits and
 * one `pods`; every object one `count/<resource>`; a few kinds their legacy names (`configmaps`,
 * `secrets`, `services`, …).
 * Upstream: kubernetes/kubernetes pkg/quota/v1/evaluator/core/pods.go and services.go, and the others listed below.
 *
 * Solves:
 * - admission charges the usage an object adds; the same function over a list gives a quota's
 *   whole usage, so the two can never count differently;
 * - a pod that has finished (Succeeded, Failed) or whose deletion grace period is over holds no
 *   compute any more: it stops counting towards `pods` and CPU/memory, though it still counts
 *   in `count/pods` (every object in storage does);
 * - a quota on requests.cpu is meaningless for a container that requests nothing, so such a pod
 *   is refused (`must specify requests.cpu for: c`) — upstream calls this coupling a mistake it
 *   keeps for compatibility.
 *
 * Invariants: usage is a resource list in canonical quantities; an object kind this file does
 * not know uses only its `count/<resource>.<group>`.
 *
 * @upstream kubernetes/kubernetes pkg/quota/v1/evaluator/core/pods.go (podEvaluator.Usage, Constraints, PodUsageFunc, podComputeUsageHelper, QuotaV1Pod, enforcePodContainerConstraints)
 * @upstream kubernetes/kubernetes pkg/quota/v1/evaluator/core/services.go (serviceEvaluator.Usage)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/quota/v1/generic/evaluator.go (ObjectCountQuotaResourceNameFor)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/component-helpers/resource/helpers.go (PodRequests, PodLimits)
 * @chapter 03-api-security
 */
import type { Container, Pod, ResourceList, Service } from "../api/core.ts";
import type { KubeObject } from "../api/meta.ts";
import { addLists, exceededNames } from "./resources.ts";

// #region object-count
/** ObjectCountQuotaResourceNameFor: `count/pods`, `count/deployments.apps`. */
export const objectCountName = (group: string, resource: string): string =>
  group ? `count/${resource}.${group}` : `count/${resource}`;

/** The names quota used for object counts before `count/` existed. */
const legacyCountNames: Record<string, string> = {
  services: "services",
  configmaps: "configmaps",
  secrets: "secrets",
  replicationcontrollers: "replicationcontrollers",
  resourcequotas: "resourcequotas",
  persistentvolumeclaims: "persistentvolumeclaims",
};
// #endregion object-count

// #region pod-usage
/** QuotaV1Pod: does this pod still hold compute? */
export function podHoldsCompute(pod: Pod, now: Date): boolean {
  const phase = pod.status?.phase;
  if (phase === "Succeeded" || phase === "Failed") return false;
  const { deletionTimestamp, deletionGracePeriodSeconds } = pod.metadata;
  if (deletionTimestamp && typeof deletionGracePeriodSeconds === "number") {
    const deadline = Date.parse(deletionTimestamp) + deletionGracePeriodSeconds * 1000;
    if (now.getTime() > deadline) return false;
  }
  return true;
}

/** max per name of two lists. */
function maxLists(a: ResourceList, b: ResourceList): ResourceList {
  const out = { ...a };
  for (const [name, v] of Object.entries(b)) {
    if (!(name in out) || exceededNames({ [name]: v }, { [name]: out[name] }).length > 0) out[name] = v;
  }
  return out;
}

/**
 * PodRequests / PodLimits: the app containers' sum, or the largest init container if that is
 * more; a sidecar (init container with restartPolicy Always) runs beside everything after it.
 */
export function podResources(pod: Pod, which: "requests" | "limits"): ResourceList {
  const of = (c: Container): ResourceList => ({ ...(c.resources?.[which] ?? {}) });
  let total: ResourceList = {};
  for (const c of pod.spec.containers ?? []) total = addLists(total, of(c));
  let sidecars: ResourceList = {};
  let initMax: ResourceList = {};
  for (const c of pod.spec.initContainers ?? []) {
    if (c.restartPolicy === "Always") {
      total = addLists(total, of(c));
      sidecars = addLists(sidecars, of(c));
      initMax = maxLists(initMax, sidecars);
    } else {
      initMax = maxLists(initMax, addLists(of(c), sidecars));
    }
  }
  return maxLists(total, initMax);
}

/** PodUsageFunc: `count/pods` always; `pods` and compute while the pod holds compute. */
export function podUsage(pod: Pod, now = new Date()): ResourceList {
  const usage: ResourceList = { "count/pods": "1" };
  if (!podHoldsCompute(pod, now)) return usage;
  usage.pods = "1";
  const requests = podResources(pod, "requests");
  const limits = podResources(pod, "limits");
  for (const name of ["cpu", "memory", "ephemeral-storage"]) {
    if (name in requests) {
      usage[name] = requests[name];
      usage[`requests.${name}`] = requests[name];
    }
    if (name in limits) usage[`limits.${name}`] = limits[name];
  }
  for (const [name, v] of Object.entries(requests)) {
    if (name.startsWith("hugepages-")) {
      usage[name] = v;
      usage[`requests.${name}`] = v;
    } else if (name.includes("/") && !name.includes("kubernetes.io/")) usage[`requests.${name}`] = v;
  }
  return usage;
}
// #endregion pod-usage

/** What an object of group/resource uses of any quota. */
export function usageOf(group: string, resource: string, obj: KubeObject, now = new Date()): ResourceList {
  if (group === "" && resource === "pods") return podUsage(obj as Pod, now);
  const usage: ResourceList = { [objectCountName(group, resource)]: "1" };
  if (group === "" && legacyCountNames[resource]) usage[legacyCountNames[resource]] = "1";
  if (group === "" && resource === "services") {
    const spec = (obj as Service).spec ?? {};
    if (spec.type === "LoadBalancer") usage["services.loadbalancers"] = "1";
    if (spec.type === "NodePort" || spec.type === "LoadBalancer") {
      usage["services.nodeports"] = String((spec.ports ?? []).length);
    }
  }
  return usage;
}

/** The quota names a resource's objects can use: which store to list to recompute a name. */
export function resourceForQuotaName(name: string): { group: string; resource: string } | undefined {
  if (name.startsWith("count/")) {
    const rest = name.slice("count/".length);
    const dot = rest.indexOf(".");
    return dot < 0
      ? { group: "", resource: rest }
      : { group: rest.slice(dot + 1), resource: rest.slice(0, dot) };
  }
  if (name.startsWith("services.")) return { group: "", resource: "services" };
  for (const resource of Object.values(legacyCountNames))
    if (name === resource) return { group: "", resource };
  // pods and every compute name (cpu, requests.memory, limits.cpu, hugepages-…, requests.example.com/gpu).
  return { group: "", resource: "pods" };
}

// #region constraints
const validationSet = ["cpu", "memory", "requests.cpu", "requests.memory", "limits.cpu", "limits.memory"];

/** podEvaluator.Constraints: each container must state what the quota limits; `undefined` when all do. */
export function podConstraints(hard: ResourceList, pod: Pod): string | undefined {
  const required = validationSet.filter((n) => n in hard);
  const missing = new Map<string, Set<string>>();
  for (const c of [...(pod.spec.containers ?? []), ...(pod.spec.initContainers ?? [])]) {
    const has = new Set<string>();
    for (const n of Object.keys(c.resources?.requests ?? {})) has.add(n).add(`requests.${n}`);
    for (const n of Object.keys(c.resources?.limits ?? {})) has.add(`limits.${n}`);
    for (const n of required) {
      if (has.has(n)) continue;
      if (!missing.has(n)) missing.set(n, new Set());
      missing.get(n)?.add(c.name);
    }
  }
  if (missing.size === 0) return undefined;
  const parts = [...missing.keys()]
    .sort()
    .map((n) => `${n} for: ${[...(missing.get(n) ?? [])].sort().join(",")}`);
  return `must specify ${parts.join("; ")}`;
}
// #endregion constraints
