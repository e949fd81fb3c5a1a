/**
 * The admission chain — the enabled plugins in upstream's fixed order; every mutating plugin's
 * `admit` first, then every validating plugin's `validate`. Upstream: k8s.io/apiserver
 * pkg/admission/chain.go (chainAdmissionHandler).
 *
 * Solves: one object the handlers call at two moments of a write — mutate before the object is
 * validated and defaulted by the registry, validate after, just before storage — without
 * knowing which plugins exist.
 *
 * Invariants:
 * - a plugin sees only the operations it `handles`;
 * - the first refusal ends the request: later plugins do not run;
 * - the order is the plugins' order in the list (admission/plugins.ts sorts by upstream's
 *   AllOrderedPlugins), never the order of the command-line flag.
 *
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/admission/chain.go (chainAdmissionHandler.Admit, Validate, Handles)
 * @chapter 03-api-security
 */
import {
  type Attributes,
  type Interface,
  isMutating,
  isValidating,
  type MutationInterface,
  type ValidationInterface,
} from "./interfaces.ts";

// #region chain
export class AdmissionChain {
  readonly mutating: MutationInterface[];
  readonly validating: ValidationInterface[];

  constructor(readonly plugins: readonly Interface[]) {
    this.mutating = plugins.filter(isMutating);
    this.validating = plugins.filter(isValidating);
  }

  async admit(a: Attributes): Promise<void> {
    for (const p of this.mutating) if (p.handles(a.operation)) await p.admit(a);
  }

  async validate(a: Attributes): Promise<void> {
    for (const p of this.validating) if (p.handles(a.operation)) await p.validate(a);
  }

  /** Stops what plugins run in the background (the webhook plugins' watches). */
  close(): void {
    for (const p of this.plugins) (p as { close?: () => void }).close?.();
  }
}
// #endregion chain
