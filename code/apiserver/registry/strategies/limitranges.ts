/**
 * LimitRange strategy — plain spec, no status: the rules (min ≤ default ≤ max) are validation's.
 * Upstream: kubernetes pkg/registry/core/limitrange/strategy.go.
 *
 * Invariants: prepareForCreate and prepareForUpdate change nothing; a PUT may create.
 *
 * @upstream kubernetes/kubernetes pkg/registry/core/limitrange/strategy.go (limitrangeStrategy)
 * @chapter 03-api-security
 */
import type { RESTStrategy } from "../strategy.ts";
import { baseStrategy } from "./helpers.ts";

export const limitRangeStrategy: RESTStrategy = {
  ...baseStrategy(true),
  allowCreateOnUpdate: true,
  allowUnconditionalUpdate: true,
};
