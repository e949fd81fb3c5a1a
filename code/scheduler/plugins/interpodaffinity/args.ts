/**
 * InterPodAffinityArgs — the plugin's configuration with v1's defaults and upstream's
 * validation, and the view of the plugin (handle, args, namespaces lister) that filtering.ts
 * and scoring.ts work with.
 *
 * @upstream kubernetes/kubernetes pkg/scheduler/apis/config/types_pluginargs.go (InterPodAffinityArgs)
 * @upstream kubernetes/kubernetes pkg/scheduler/apis/config/v1/defaults.go (SetDefaults_InterPodAffinityArgs)
 * @upstream kubernetes/kubernetes pkg/scheduler/apis/config/validation/validation_pluginargs.go (ValidateInterPodAffinityArgs)
 * @chapter 05-scheduler
 *
 * Solves: filtering.ts and scoring.ts need the plugin's settings and handle, but must not
 * import the plugin class (which imports them): this small interface breaks the circle.
 *
 * Invariants:
 * - `hardPodAffinityWeight` is an integer in [0, 100], default 1; 0 turns off scoring existing
 *   pods' required affinity.
 * - `ignorePreferredTermsOfExistingPods` defaults to false.
 */
import type { InterPodAffinityArgs } from "../../apis/config/types-pluginargs.ts";
import type { Handle } from "../../framework/runtime/registry.ts";
import type { NamespaceLister } from "./terms.ts";

// #region args
/** InterPodAffinityArgs (apis/config) as a caller may give them: none, or some fields. */
export type InterPodAffinityArgsInput = Partial<InterPodAffinityArgs>;

export const DefaultHardPodAffinityWeight = 1;
const minHardPodAffinityWeight = 0;
const maxHardPodAffinityWeight = 100;

/** The args with v1's defaults applied (SetDefaults_InterPodAffinityArgs). */
export function defaultInterPodAffinityArgs(
  a: InterPodAffinityArgsInput = {},
): Required<InterPodAffinityArgs> {
  return {
    hardPodAffinityWeight: a.hardPodAffinityWeight ?? DefaultHardPodAffinityWeight,
    ignorePreferredTermsOfExistingPods: a.ignorePreferredTermsOfExistingPods ?? false,
  };
}

/** ValidateInterPodAffinityArgs: upstream's field.Invalid text, or undefined. */
export function validateInterPodAffinityArgs(a: Required<InterPodAffinityArgs>): Error | undefined {
  const w = a.hardPodAffinityWeight;
  if (!Number.isInteger(w) || w < minHardPodAffinityWeight || w > maxHardPodAffinityWeight) {
    return new Error(
      `hardPodAffinityWeight: Invalid value: ${w}: not in valid range [${minHardPodAffinityWeight}, ${maxHardPodAffinityWeight}]`,
    );
  }
  return undefined;
}
// #endregion args

/** What filtering.ts and scoring.ts read of the plugin (the plugin class implements it). */
export interface InterPodAffinityContext {
  readonly handle: Handle;
  readonly args: Required<InterPodAffinityArgs>;
  nsLister(): NamespaceLister | undefined;
}
