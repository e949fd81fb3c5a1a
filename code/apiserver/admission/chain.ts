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
 * Chapter 8 (tracing): each plugin that ran is an event on the request's active span (`admit
 * <plugin>`, `validate <plugin>`, with its duration) — upstream times plugins in metrics
 * (admission_controller_admission_duration_seconds), not in traces.
 *
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/admission/chain.go (chainAdmissionHandler.Admit, Validate, Handles)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/admission/metrics/metrics.go (per-plugin timing, here as span events)
 * @chapter 03-api-security
 */
import { activeSpan, type Span } from "../../tracing/tracing.ts";
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
    const span = activeSpan(); // chapter 8: tracing
    for (const p of this.mutating) {
      if (!p.handles(a.operation)) continue;
      const started = span && performance.now();
      await p.admit(a);
      if (span) pluginEvent(span, "admit", p.name, a, started as number);
    }
  }

  async validate(a: Attributes): Promise<void> {
    const span = activeSpan();
    for (const p of this.validating) {
      if (!p.handles(a.operation)) continue;
      const started = span && performance.now();
      await p.validate(a);
      if (span) pluginEvent(span, "validate", p.name, a, started as number);
    }
  }

  /** Stops what plugins run in the background (the webhook plugins' watches). */
  close(): void {
    for (const p of this.plugins) (p as { close?: () => void }).close?.();
  }
}
// #endregion chain

/** chapter 8: tracing — one admission plugin's run, as an event of the request's span. */
function pluginEvent(span: Span, step: string, plugin: string, a: Attributes, started: number): void {
  span.addEvent(`${step} ${plugin}`, {
    operation: a.operation,
    durationMs: Math.round((performance.now() - started) * 1000) / 1000,
  });
}
