/**
 * ServiceAccount strategy — an identity for pods; nothing for the server to prepare.
 * Upstream: kubernetes pkg/registry/core/serviceaccount/strategy.go.
 *
 * Solves: since v1.24 token secrets are no longer made for each ServiceAccount (pods get
 * short-lived projected tokens), so the object is plain data and the strategy the generic one.
 *
 * Invariants: prepareForCreate and prepareForUpdate change nothing.
 *
 * @upstream kubernetes/kubernetes pkg/registry/core/serviceaccount/strategy.go (strategy)
 * @chapter 02-apiserver
 */
import type { RESTStrategy } from "../strategy.ts";
import { baseStrategy } from "./helpers.ts";

export const serviceAccountStrategy: RESTStrategy = {
  ...baseStrategy(true),
  allowCreateOnUpdate: false,
  allowUnconditionalUpdate: true,
};
