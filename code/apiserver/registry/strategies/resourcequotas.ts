/**
 * ResourceQuota strategy — the spec is the user's, the status (hard as enforced, used as
 * charged) is quota admission's and the quota controller's.
 * Upstream: kubernetes pkg/registry/core/resourcequota/strategy.go.
 *
 * Solves: a user must not be able to reset `status.used` to zero with an edit of the quota,
 * and quota admission's status write must not change the limits it enforces.
 *
 * Invariants:
 * - create clears the status (the charge starts from a recomputation, not from the client);
 * - an update of the main resource keeps the stored status; the status subresource keeps the
 *   stored spec;
 * - unconditional updates are allowed (upstream's AllowUnconditionalUpdate is true): only a
 *   write that sends a resourceVersion is checked against the stored one — quota admission
 *   always sends one.
 *
 * @upstream kubernetes/kubernetes pkg/registry/core/resourcequota/strategy.go (resourcequotaStrategy, resourcequotaStatusStrategy)
 * @chapter 03-api-security
 */
import type { RESTStrategy } from "../strategy.ts";
import { baseStrategy, keepFromOld, statusStrategy } from "./helpers.ts";
import { validateStatusUpdate } from "./validation.ts";

export const resourceQuotaStrategy: RESTStrategy = {
  ...baseStrategy(true),
  prepareForCreate(obj) {
    obj.status = {};
  },
  prepareForUpdate(obj, old) {
    keepFromOld(obj, old, "status");
  },
  allowCreateOnUpdate: false,
  allowUnconditionalUpdate: true,
};

resourceQuotaStrategy.status = statusStrategy(resourceQuotaStrategy, {
  prepareForUpdate(obj, old) {
    keepFromOld(obj, old, "spec");
  },
  validateUpdate: (obj, old) => validateStatusUpdate(obj, old),
});
