/**
 * ConfigMap strategy — plain data, no status, nothing for the server to prepare.
 * Upstream: kubernetes pkg/registry/core/configmap/strategy.go.
 *
 * Solves: a ConfigMap is only what its writer put in it; the rules that matter (keys are valid
 * names, an `immutable` ConfigMap's data never changes) are validation's, so the strategy is the
 * generic one: no create on PUT, last writer wins when no resourceVersion is sent.
 *
 * Invariants: prepareForCreate and prepareForUpdate change nothing.
 *
 * @upstream kubernetes/kubernetes pkg/registry/core/configmap/strategy.go (strategy)
 * @chapter 02-apiserver
 */
import type { RESTStrategy } from "../strategy.ts";
import { baseStrategy } from "./helpers.ts";

export const configMapStrategy: RESTStrategy = {
  ...baseStrategy(true),
  allowCreateOnUpdate: false,
  allowUnconditionalUpdate: true,
};
