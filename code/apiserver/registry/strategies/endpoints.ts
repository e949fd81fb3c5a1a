/**
 * Endpoints strategy — the addresses behind a Service, written by the endpoints controller.
 * Upstream: kubernetes pkg/registry/core/endpoint/strategy.go.
 *
 * Solves: the controller keeps one Endpoints object per Service and simply PUTs what it
 * computed; the object may not exist yet (or was deleted by someone), so a PUT may create it.
 *
 * Invariants: prepareForCreate and prepareForUpdate change nothing.
 *
 * @upstream kubernetes/kubernetes pkg/registry/core/endpoint/strategy.go (endpointsStrategy: AllowCreateOnUpdate true)
 * @chapter 02-apiserver
 */
import type { RESTStrategy } from "../strategy.ts";
import { baseStrategy } from "./helpers.ts";

export const endpointsStrategy: RESTStrategy = {
  ...baseStrategy(true),
  allowCreateOnUpdate: true,
  allowUnconditionalUpdate: true,
};
