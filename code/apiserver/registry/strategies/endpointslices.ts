/**
 * EndpointSlice strategy — slices are written whole by their manager (the EndpointSlice
 * controller, or a user who keeps slices by hand); the generation counts content changes.
 * Upstream: kubernetes pkg/registry/discovery/endpointslice/strategy.go.
 *
 * Solves: the controller's cache of what it wrote compares generations, so a change to the
 * endpoints, ports or address type bumps `metadata.generation`; a label-only write does not.
 *
 * Invariants:
 * - after prepareForCreate: generation = 1;
 * - after prepareForUpdate: generation = old + 1 iff anything outside metadata changed;
 * - a PUT never creates (AllowCreateOnUpdate false); an update without resourceVersion is accepted.
 *
 * @upstream kubernetes/kubernetes pkg/registry/discovery/endpointslice/strategy.go (endpointSliceStrategy)
 * @chapter 07-kubelet
 */
import type { KubeObject } from "../../../api/meta.ts";
import type { RESTStrategy } from "../strategy.ts";
import { baseStrategy, semanticDeepEqual } from "./helpers.ts";

const content = (o: KubeObject) => ({ addressType: o.addressType, endpoints: o.endpoints, ports: o.ports });

export const endpointSliceStrategy: RESTStrategy = {
  ...baseStrategy(true),
  prepareForCreate(obj) {
    obj.metadata.generation = 1;
  },
  prepareForUpdate(obj, old) {
    const generation = old.metadata.generation ?? 0;
    obj.metadata.generation = semanticDeepEqual(content(obj), content(old)) ? generation : generation + 1;
  },
  allowCreateOnUpdate: false,
  allowUnconditionalUpdate: true,
};
