/**
 * EndpointSlice types — a service's endpoints cut into slices of at most 100 (the controller's
 * default), so that one pod's change rewrites one small object, not the whole Endpoints.
 * Mirrors kubernetes/kubernetes staging/src/k8s.io/api/discovery/v1/types.go.
 *
 * Solves:
 * - `kubectl describe service` (1.32) reads a service's endpoints from its slices, found by the
 *   label `kubernetes.io/service-name`, not from the Endpoints object;
 * - a slice says which controller manages it (`endpointslice.kubernetes.io/managed-by`), so the
 *   EndpointSlice controller never rewrites slices someone else keeps.
 *
 * Invariants:
 * - every address of a slice is of its addressType (IPv4, IPv6 or FQDN), which never changes;
 * - an endpoint has 1 to 100 addresses; a slice at most 1000 endpoints and 100 ports, with
 *   unique port names;
 * - an absent condition is unknown (consumers read an absent `ready` as ready).
 *
 * @upstream kubernetes/kubernetes staging/src/k8s.io/api/discovery/v1/types.go (EndpointSlice, Endpoint, EndpointConditions, EndpointPort, AddressType)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/api/discovery/v1/well_known_labels.go (LabelServiceName, LabelManagedBy)
 * @chapter 07-kubelet
 */
import type { ObjectReference } from "./core.ts";
import type { KubeObject } from "./meta.ts";

/** IPv4 and IPv6 are what controllers write; FQDN is for slices users keep by hand. */
export type AddressType = "IPv4" | "IPv6" | "FQDN";
export const supportedAddressTypes: readonly AddressType[] = ["IPv4", "IPv6", "FQDN"];

/** The label naming the service a slice belongs to. */
export const LabelServiceName = "kubernetes.io/service-name";
/** The label naming the controller (or user) that manages a slice. */
export const LabelManagedBy = "endpointslice.kubernetes.io/managed-by";

export interface EndpointConditions {
  ready?: boolean;
  serving?: boolean;
  terminating?: boolean;
}

export interface Endpoint {
  addresses: string[];
  conditions?: EndpointConditions;
  hostname?: string;
  targetRef?: ObjectReference;
  nodeName?: string;
  zone?: string;
}

export interface EndpointPort {
  name?: string;
  protocol?: string;
  port?: number;
  appProtocol?: string;
}

export interface EndpointSlice extends KubeObject {
  addressType: AddressType;
  endpoints: Endpoint[];
  ports?: EndpointPort[];
}
