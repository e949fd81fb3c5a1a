/**
 * PodTopologySpreadArgs — the plugin's configuration: which constraints apply to pods that
 * declare none, and the system defaults used when the configuration does not list its own.
 *
 * @upstream kubernetes/kubernetes pkg/scheduler/apis/config/types_pluginargs.go (PodTopologySpreadArgs, PodTopologySpreadConstraintsDefaulting, SystemDefaulting, ListDefaulting)
 * @upstream kubernetes/kubernetes pkg/scheduler/apis/config/v1/defaults.go (SetDefaults_PodTopologySpreadArgs)
 * @upstream kubernetes/kubernetes pkg/scheduler/framework/plugins/podtopologyspread/plugin.go (systemDefaultConstraints)
 * @chapter 05-scheduler
 *
 * Solves: most pods (a Deployment's replicas) never say how to spread, yet putting all of
 * them on one node or zone is what a cluster operator least wants. The system defaults spread
 * them softly by hostname and zone; an operator can replace them with a list (or with an
 * empty list to turn default spreading off).
 *
 * Invariants:
 * - absent args, or an absent `defaultingType`, mean System: `systemDefaultConstraints`, and
 *   the configured `defaultConstraints` must then be empty.
 * - with List, `defaultConstraints` are used as given; they may not carry a labelSelector
 *   (it is deduced per pod from its Services and controller).
 */
import type { TopologySpreadConstraint } from "../../../api/core.ts";
import type {
  PodTopologySpreadArgs,
  PodTopologySpreadConstraintsDefaulting,
} from "../../apis/config/types-pluginargs.ts";

// #region args
export const SystemDefaulting: PodTopologySpreadConstraintsDefaulting = "System";
export const ListDefaulting: PodTopologySpreadConstraintsDefaulting = "List";

/** PodTopologySpreadArgs (apis/config) as a caller may give them: absent defaultingType is System. */
export type PodTopologySpreadArgsInput = Partial<PodTopologySpreadArgs>;

/**
 * systemDefaultConstraints: soft on both keys, looser on zones (maxSkew 5) than on hosts
 * (maxSkew 3) — a zone holds many hosts, so the same imbalance matters less there.
 */
export const systemDefaultConstraints: readonly TopologySpreadConstraint[] = [
  { topologyKey: "kubernetes.io/hostname", whenUnsatisfiable: "ScheduleAnyway", maxSkew: 3 },
  { topologyKey: "topology.kubernetes.io/zone", whenUnsatisfiable: "ScheduleAnyway", maxSkew: 5 },
];
// #endregion args

/** SetDefaults_PodTopologySpreadArgs: an unset defaultingType is System. */
export function withDefaults(args: PodTopologySpreadArgsInput | undefined): Required<PodTopologySpreadArgs> {
  return {
    defaultConstraints: args?.defaultConstraints ?? [],
    defaultingType: args?.defaultingType || SystemDefaulting,
  };
}

/**
 * The defaulting checks of ValidatePodTopologySpreadArgs, upstream's field paths and words
 * (the full validation — maxSkew, topologyKey, duplicates — is the configuration's, apis/config).
 */
export function validateArgs(args: Required<PodTopologySpreadArgs>): Error | undefined {
  const t = args.defaultingType;
  if (t !== SystemDefaulting && t !== ListDefaulting) {
    return new Error(`defaultingType: Unsupported value: "${t}": supported values: "System", "List"`);
  }
  if (t === SystemDefaulting && args.defaultConstraints.length > 0) {
    return new Error(`defaultingType: Invalid value: "System": when .defaultConstraints are not empty`);
  }
  for (const [i, c] of args.defaultConstraints.entries()) {
    if (c.labelSelector !== undefined) {
      return new Error(
        `defaultConstraints[${i}].labelSelector: Forbidden: constraint must not define a selector, as they deduced for each pod`,
      );
    }
  }
  return undefined;
}
