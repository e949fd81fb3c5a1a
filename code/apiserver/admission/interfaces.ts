/**
 * Admission — the plugins that see every write after it is authorized and before it is stored:
 * mutating ones may change the object, validating ones may only refuse it. Upstream:
 * k8s.io/apiserver pkg/admission/interfaces.go.
 *
 * Solves: policies that RBAC cannot express ("every pod gets a service account", "no more than
 * 10 pods in this namespace", "no privileged containers here") live in one chain the API server
 * runs for every create, update, delete and connect, whoever the client is.
 *
 * Invariants:
 * - every mutating plugin runs before any validating one, so validators judge the final object;
 * - a plugin refuses by throwing a Status error (usually 403 Forbidden or 422 Invalid); the
 *   request fails and nothing is stored;
 * - `object` is the new object (undefined for delete and connect), `oldObject` the stored one
 *   (undefined for create); a mutating plugin changes `object` in place.
 *
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/admission/interfaces.go (Attributes, Interface, MutationInterface, ValidationInterface, Operation)
 * @chapter 03-api-security
 */
import type { KubeObject } from "../../api/meta.ts";
import type { UserInfo } from "../authn/user.ts";

// #region attributes
export type Operation = "CREATE" | "UPDATE" | "DELETE" | "CONNECT";

export interface Attributes {
  name: string;
  namespace: string;
  /** group, version, resource of the request: `{group: "", version: "v1", resource: "pods"}`. */
  resource: { group: string; version: string; resource: string };
  subresource: string;
  /** group, version, kind of the object: `{group: "", version: "v1", kind: "Pod"}`. */
  kind: { group: string; version: string; kind: string };
  operation: Operation;
  /** CreateOptions, UpdateOptions, DeleteOptions or PatchOptions as sent, if any. */
  options?: KubeObject;
  dryRun: boolean;
  object?: KubeObject;
  oldObject?: KubeObject;
  userInfo: UserInfo;
  /** Plugins may record facts for audit (`pod-security.kubernetes.io/enforce-policy`). */
  annotations?: Record<string, string>;
  /** Warnings to return to the client (kubectl prints them as `Warning: …`). */
  warnings?: string[];
}
// #endregion attributes

// #region interfaces
export interface Interface {
  /** The plugin's name as `--enable-admission-plugins` spells it. */
  readonly name: string;
  handles(operation: Operation): boolean;
}

export interface MutationInterface extends Interface {
  admit(a: Attributes): Promise<void>;
}

export interface ValidationInterface extends Interface {
  validate(a: Attributes): Promise<void>;
}
// #endregion interfaces

export function isMutating(p: Interface): p is MutationInterface {
  return typeof (p as MutationInterface).admit === "function";
}

export function isValidating(p: Interface): p is ValidationInterface {
  return typeof (p as ValidationInterface).validate === "function";
}
