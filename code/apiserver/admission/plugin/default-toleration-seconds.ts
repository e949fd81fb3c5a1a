/**
 * DefaultTolerationSeconds — every pod tolerates a not-ready or unreachable node for 300
 * seconds (`--default-not-ready-toleration-seconds`, `--default-unreachable-toleration-seconds`)
 * unless it says otherwise.
 *
 * Solves: the node lifecycle controller taints a node that stops reporting with
 * `node.kubernetes.io/not-ready` or `…/unreachable` (NoExecute), which evicts every pod not
 * tolerating it. Evicting at once would turn a network blip into a rescheduling storm; never
 * evicting would strand pods on a dead node. Five minutes is the default middle.
 *
 * Invariants: a toleration the pod already has for that key (or for every key) with effect
 * NoExecute (or every effect) is left as it is; only creates are changed.
 *
 * @upstream kubernetes/kubernetes plugin/pkg/admission/defaulttolerationseconds/admission.go (Plugin.Admit, --default-not-ready-toleration-seconds, --default-unreachable-toleration-seconds)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/api/core/v1/well_known_taints.go (TaintNodeNotReady, TaintNodeUnreachable)
 * @chapter 03-api-security
 */
import type { Pod, Toleration } from "../../../api/core.ts";
import type { MutationInterface } from "../interfaces.ts";

export const PluginName = "DefaultTolerationSeconds";
export const TaintNodeNotReady = "node.kubernetes.io/not-ready";
export const TaintNodeUnreachable = "node.kubernetes.io/unreachable";

export interface TolerationSecondsOptions {
  notReadySeconds?: number;
  unreachableSeconds?: number;
}

// #region default-tolerations
/** True when `t` already tolerates the NoExecute taint `key`. */
const toleratesNoExecute = (t: Toleration, key: string) =>
  (t.key === key || !t.key) && (t.effect === "NoExecute" || !t.effect);

export function newDefaultTolerationSeconds(opts: TolerationSecondsOptions = {}): MutationInterface {
  const defaults: [string, number][] = [
    [TaintNodeNotReady, opts.notReadySeconds ?? 300],
    [TaintNodeUnreachable, opts.unreachableSeconds ?? 300],
  ];
  return {
    name: PluginName,
    handles: (op) => op === "CREATE",
    async admit(a) {
      if (a.resource.group !== "" || a.resource.resource !== "pods" || a.subresource || !a.object) return;
      const pod = a.object as Pod;
      for (const [key, seconds] of defaults) {
        const tolerations = pod.spec.tolerations ?? [];
        if (tolerations.some((t) => toleratesNoExecute(t, key))) continue;
        pod.spec.tolerations = [
          ...tolerations,
          { key, operator: "Exists", effect: "NoExecute", tolerationSeconds: seconds },
        ];
      }
    },
  };
}
// #endregion default-tolerations
