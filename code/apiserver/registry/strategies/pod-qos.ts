/**
 * Pod QoS class — Guaranteed, Burstable or BestEffort, stamped on a pod once, at creation.
 * Upstream: kubernetes pkg/apis/core/helper/qos/qos.go (ComputePodQOS), reached through
 * GetPodQOS from the pod strategy's PrepareForCreate.
 *
 * Solves:
 * - when a node runs short of memory, the kubelet must know whom to evict first (BestEffort,
 *   then Burstable) and how to set each container's OOM score; the answer depends only on the
 *   requests and limits the pod was created with, so the API server stamps it on
 *   `status.qosClass` at creation;
 * - requests and limits are quantities written many ways (`0.5`, `500m`, `512Mi`, `1e3`): the
 *   comparison "requests equal limits" must compare values, not spellings.
 *
 * Invariants:
 * - only cpu and memory count (upstream's supportedQoSComputeResources);
 * - BestEffort: no container requests or limits any cpu or memory;
 * - Guaranteed: every container (init containers too) sets both cpu and memory limits, and for
 *   every resource the pod's summed requests equal its summed limits;
 * - Burstable: everything else.
 *
 * @upstream kubernetes/kubernetes pkg/apis/core/helper/qos/qos.go (ComputePodQOS, isSupportedQoSComputeResource)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apimachinery/pkg/api/resource/quantity.go (ParseQuantity: suffixes)
 * @chapter 02-apiserver
 */
import type { Container, Pod } from "../../../api/core.ts";

export type PodQOSClass = "Guaranteed" | "Burstable" | "BestEffort";

const supportedQoSComputeResources = new Set(["cpu", "memory"]);

// #region quantity
const binarySuffixes: Record<string, bigint> = {
  Ki: 1n << 10n,
  Mi: 1n << 20n,
  Gi: 1n << 30n,
  Ti: 1n << 40n,
  Pi: 1n << 50n,
  Ei: 1n << 60n,
};
const decimalSuffixes: Record<string, number> = {
  n: -9,
  u: -6,
  m: -3,
  "": 0,
  k: 3,
  M: 6,
  G: 9,
  T: 12,
  P: 15,
  E: 18,
};

/**
 * A quantity's value in nano-units (so `500m` is 500_000_000n and `1Ki` is 1024_000_000_000n),
 * exact for every spelling the API accepts; rounds up below a nano-unit as upstream does.
 * Returns undefined for text that is not a quantity (validation reports it later).
 */
export function quantityNanos(text: string): bigint | undefined {
  const m = /^([+-]?)(\d+(?:\.\d*)?|\.\d+)(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE]|[eE][+-]?\d+)?$/.exec(text.trim());
  if (!m) return undefined;
  const [, sign, number, suffix = ""] = m;
  const [whole, fraction = ""] = number.split(".");
  let digits = BigInt(`${whole}${fraction}` || "0");
  let exp10 = 9 - fraction.length; // to nano-units, minus the digits after the point
  if (suffix in binarySuffixes) digits *= binarySuffixes[suffix];
  else if (suffix in decimalSuffixes) exp10 += decimalSuffixes[suffix];
  else exp10 += Number(suffix.slice(1));
  let nanos: bigint;
  if (exp10 >= 0) nanos = digits * 10n ** BigInt(exp10);
  else {
    const div = 10n ** BigInt(-exp10);
    nanos = (digits + div - 1n) / div;
  }
  return sign === "-" ? -nanos : nanos;
}
// #endregion quantity

// #region compute-pod-qos
/** Sums the positive cpu/memory quantities of one list into `into`; returns the names found. */
function addPositive(list: Record<string, string> | undefined, into: Map<string, bigint>): Set<string> {
  const found = new Set<string>();
  for (const [name, text] of Object.entries(list ?? {})) {
    if (!supportedQoSComputeResources.has(name)) continue;
    const value = quantityNanos(text);
    if (value === undefined || value <= 0n) continue;
    found.add(name);
    into.set(name, (into.get(name) ?? 0n) + value);
  }
  return found;
}

export function computePodQOS(pod: Pod): PodQOSClass {
  const requests = new Map<string, bigint>();
  const limits = new Map<string, bigint>();
  let isGuaranteed = true;
  const containers: Container[] = [...(pod.spec?.containers ?? []), ...(pod.spec?.initContainers ?? [])];
  for (const c of containers) {
    addPositive(c.resources?.requests, requests);
    const limitsFound = addPositive(c.resources?.limits, limits);
    // A container without both limits leaves the pod room to grow: not Guaranteed.
    if (!limitsFound.has("cpu") || !limitsFound.has("memory")) isGuaranteed = false;
  }
  if (requests.size === 0 && limits.size === 0) return "BestEffort";
  if (isGuaranteed) {
    for (const [name, request] of requests) {
      if (limits.get(name) !== request) {
        isGuaranteed = false;
        break;
      }
    }
  }
  return isGuaranteed && requests.size === limits.size ? "Guaranteed" : "Burstable";
}
// #endregion compute-pod-qos
