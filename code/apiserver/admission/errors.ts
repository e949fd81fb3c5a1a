/**
 * Admission errors — how a plugin refuses: a 403 Forbidden that names the object the request
 * was about. Upstream: k8s.io/apiserver pkg/admission/errors.go (NewForbidden).
 *
 * Solves: every plugin refuses in the same shape (`pods "web" is forbidden: <why>`), so kubectl
 * prints one kind of message whichever plugin said no.
 *
 * Invariants: the resource named is the request's (pods for pods/binding too), the name is
 * the object's — for a create with generateName, the generated name is not known yet.
 *
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/admission/errors.go (NewForbidden, extractResourceName)
 * @chapter 03-api-security
 */
import { newForbidden, type StatusError } from "../errors.ts";
import type { Attributes } from "./interfaces.ts";

// #region forbidden
export function newAdmissionForbidden(a: Attributes, reason: string): StatusError {
  const name = a.name || (a.object?.metadata?.name ?? "");
  return newForbidden({ group: a.resource.group, resource: a.resource.resource }, name, reason);
}
// #endregion forbidden
