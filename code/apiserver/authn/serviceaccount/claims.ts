/**
 * Service-account token claims — what a bound token says (who, for whom, until when, bound to
 * what), and the checks that make a signed token still worth trusting when it comes back.
 * Upstream: kubernetes pkg/serviceaccount/claims.go (Claims, validator.Validate).
 *
 * Solves:
 * - a signature only proves the API server wrote the token once; the validator asks whether it
 *   is still true: not expired, already valid, and the ServiceAccount (and the Pod, Secret or
 *   Node it was bound to) still exists *with the same uid* — deleting a ServiceAccount, or a
 *   pod, revokes every token made for it, and a ServiceAccount recreated under the same name is
 *   a new identity that the old tokens do not reach;
 * - clocks differ a little between the signer and the checker: every time check allows
 *   upstream's leeway of one minute (go-jose's jwt.DefaultLeeway).
 *
 * Invariants:
 * - public claims are the registered JWT ones (`iss`, `sub`, `aud`, `exp`, `iat`, `nbf`, `jti`);
 *   everything Kubernetes adds is under the one private claim `kubernetes.io`;
 * - a token is bound to at most one object kind: a Pod (and, informationally, its Node), a
 *   Secret, or a Node;
 * - the error messages are for the server's log; the client only ever sees 401.
 *
 * @upstream kubernetes/kubernetes pkg/serviceaccount/claims.go (privateClaims, Claims, validator.Validate)
 * @upstream kubernetes/kubernetes vendor/gopkg.in/square/go-jose.v2/jwt/validation.go (Claims.ValidateWithLeeway, DefaultLeeway)
 * @chapter 03-api-security
 */
import { randomUUID } from "node:crypto";
import type { KubeObject } from "../../../api/meta.ts";
import type { ServiceAccountTokenGetter } from "./getter.ts";
import { credentialIDForJTI, makeUsername, type ServiceAccountInfo } from "./user.ts";

/** go-jose's jwt.DefaultLeeway: how far apart two clocks may be. */
export const leewaySeconds = 60;

/** A bound pod token asked for with exactly this lifetime is extended to a year, but warned after it. */
export const WarnOnlyBoundTokenExpirationSeconds = 60 * 60 + 7;
export const ExpirationExtensionSeconds = 24 * 365 * 60 * 60;

// #region claims
export interface ObjectRef {
  name?: string;
  uid?: string;
}

/** The payload of a service-account JWT. Keys in the order upstream's encoder writes them (sorted). */
export interface ServiceAccountClaims {
  aud?: string[] | string;
  exp?: number;
  iat?: number;
  iss?: string;
  jti?: string;
  "kubernetes.io"?: {
    namespace?: string;
    node?: ObjectRef;
    pod?: ObjectRef;
    secret?: ObjectRef;
    serviceaccount?: ObjectRef;
    warnafter?: number;
  };
  nbf?: number;
  sub?: string;
}

export interface BoundObjects {
  pod?: KubeObject;
  secret?: KubeObject;
  /** With a pod: the node it runs on (name only if the Node object is missing). Alone: a node-bound token. */
  node?: KubeObject;
}

/** The claims of a new token for `sa`; the issuer (`iss`) is the signer's to add. */
export function serviceAccountClaims(
  sa: KubeObject,
  bound: BoundObjects,
  expirationSeconds: number,
  warnAfterSeconds: number,
  audiences: string[],
  now: Date = new Date(),
  newUUID: () => string = randomUUID,
): ServiceAccountClaims {
  const { pod, secret, node } = bound;
  if (secret && (pod || node))
    throw new TypeError("internal error, token can only be bound to one object type");
  const nowSec = Math.floor(now.getTime() / 1000);
  const namespace = sa.metadata.namespace ?? "";
  const k8s: NonNullable<ServiceAccountClaims["kubernetes.io"]> = { namespace };
  // Bound to one kind of object; a pod-bound token also names the pod's node, for information.
  if (pod) {
    if (node) k8s.node = refTo(node);
    k8s.pod = refTo(pod);
  } else if (secret) {
    k8s.secret = refTo(secret);
  } else if (node) {
    k8s.node = refTo(node);
  }
  k8s.serviceaccount = refTo(sa);
  if (warnAfterSeconds !== 0) k8s.warnafter = nowSec + warnAfterSeconds;
  return {
    aud: audiences,
    exp: nowSec + expirationSeconds,
    iat: nowSec,
    jti: newUUID(),
    "kubernetes.io": k8s,
    nbf: nowSec,
    sub: makeUsername(namespace, sa.metadata.name ?? ""),
  };
}

/** `{name, uid}` with Go's omitempty: an empty field is left out. */
function refTo(obj: KubeObject): ObjectRef {
  const ref: ObjectRef = {};
  if (obj.metadata.name) ref.name = obj.metadata.name;
  if (obj.metadata.uid) ref.uid = obj.metadata.uid;
  return ref;
}
// #endregion claims

/** A token that does not pass; the message goes to the log, never to the client. */
export class InvalidTokenError extends Error {
  override name = "InvalidTokenError";
}

// #region claim-types
/**
 * The claims' types, checked as go-jose's typed decode checks them (`tok.Claims(key, public,
 * private)` into jwt.Claims and the private `kubernetes.io` struct): a field of the wrong JSON
 * type fails the token; `null` is Go's "absent". Found by testing/fuzz-secured.ts: without it a
 * correctly signed token with `"exp": "soon"` passed the expiry check (`now > "soon"` is false),
 * and one with `"sub": 5` or `"nbf": {}` was accepted — upstream refuses all three.
 * Returns the decode error in Go's words, or undefined when every claim has its type.
 */
export function claimTypeError(claims: unknown): string | undefined {
  const isObject = (v: unknown): v is Record<string, unknown> =>
    typeof v === "object" && v !== null && !Array.isArray(v);
  const jsonType = (v: unknown) =>
    Array.isArray(v) ? "array" : v === null ? "null" : typeof v === "object" ? "object" : typeof v;
  const mismatch = (v: unknown, field: string, goType: string) =>
    `json: cannot unmarshal ${jsonType(v)} into Go struct field ${field} of type ${goType}`;
  if (!isObject(claims)) return claims === null ? undefined : mismatch(claims, "Claims", "jwt.Claims");
  const strings: [unknown, string][] = [
    [claims.iss, "Claims.iss"],
    [claims.sub, "Claims.sub"],
    [claims.jti, "Claims.jti"],
  ];
  const dates: [unknown, string][] = [
    [claims.exp, "Claims.exp"],
    [claims.nbf, "Claims.nbf"],
    [claims.iat, "Claims.iat"],
  ];
  const aud = claims.aud;
  if (
    aud != null &&
    typeof aud !== "string" &&
    !(Array.isArray(aud) && aud.every((a) => typeof a === "string"))
  )
    return "square/go-jose/jwt: expected string or array value to unmarshal to Audience";
  const k8s = claims["kubernetes.io"];
  if (k8s != null) {
    if (!isObject(k8s)) return mismatch(k8s, "privateClaims.kubernetes.io", "serviceaccount.kubernetes");
    strings.push([k8s.namespace, "kubernetes.namespace"]);
    dates.push([k8s.warnafter, "kubernetes.warnafter"]);
    for (const ref of ["serviceaccount", "pod", "secret", "node"]) {
      const r = k8s[ref];
      if (r == null) continue;
      if (!isObject(r)) return mismatch(r, `kubernetes.${ref}`, "serviceaccount.ref");
      strings.push([r.name, `ref.name`], [r.uid, `ref.uid`]);
    }
  }
  for (const [v, field] of strings)
    if (v != null && typeof v !== "string") return mismatch(v, field, "string");
  for (const [v, field] of dates)
    if (v != null && typeof v !== "number") return mismatch(v, field, "float64");
  return undefined;
}
// #endregion claim-types

// #region validate
/**
 * validator.Validate: the checks after the signature, issuer and audience (jwt.ts) have passed.
 * Times first (no storage read for an expired token), then the objects the token names.
 */
export async function validateServiceAccountClaims(
  claims: ServiceAccountClaims,
  getter: ServiceAccountTokenGetter,
  now: Date = new Date(),
): Promise<ServiceAccountInfo> {
  const nowSec = now.getTime() / 1000;
  // go-jose's order: not-before, expiry, issued-at; each with the leeway. `null` is absent, as in Go.
  if (claims.nbf != null && nowSec + leewaySeconds < claims.nbf) {
    throw new InvalidTokenError("service account token is not valid yet");
  }
  if (claims.exp != null && nowSec - leewaySeconds > claims.exp) {
    throw new InvalidTokenError("service account token has expired");
  }
  if (claims.iat != null && nowSec + leewaySeconds < claims.iat) {
    throw new InvalidTokenError("service account token is issued in the future");
  }

  // Something deleted before now-leeway is gone; within the leeway it may still be in use.
  const invalidIfDeletedBefore = now.getTime() - leewaySeconds * 1000;
  const deleted = (obj: KubeObject) =>
    obj.metadata.deletionTimestamp !== undefined &&
    Date.parse(obj.metadata.deletionTimestamp as string) < invalidIfDeletedBefore;

  const k8s = claims["kubernetes.io"] ?? {};
  const namespace = k8s.namespace ?? "";
  const saRef = k8s.serviceaccount ?? {};
  const sa = await getter.getServiceAccount(namespace, saRef.name ?? "");
  if ((sa.metadata.uid ?? "") !== (saRef.uid ?? "")) {
    throw new InvalidTokenError(
      `service account UID (${sa.metadata.uid}) does not match claim (${saRef.uid ?? ""})`,
    );
  }
  if (deleted(sa)) throw new InvalidTokenError(`service account ${namespace}/${saRef.name} has been deleted`);

  if (k8s.secret) {
    const secret = await getter.getSecret(namespace, k8s.secret.name ?? "").catch(() => invalidated());
    if ((secret.metadata.uid ?? "") !== (k8s.secret.uid ?? "")) {
      throw new InvalidTokenError(
        `secret UID (${secret.metadata.uid}) does not match service account secret ref claim (${k8s.secret.uid ?? ""})`,
      );
    }
    if (deleted(secret)) invalidated();
  }

  const info: ServiceAccountInfo = { namespace, name: saRef.name ?? "", uid: saRef.uid ?? "" };
  if (k8s.pod) {
    const pod = await getter.getPod(namespace, k8s.pod.name ?? "").catch(() => invalidated());
    if ((pod.metadata.uid ?? "") !== (k8s.pod.uid ?? "")) {
      throw new InvalidTokenError(
        `pod UID (${pod.metadata.uid}) does not match service account pod ref claim (${k8s.pod.uid ?? ""})`,
      );
    }
    if (deleted(pod)) invalidated();
    info.podName = k8s.pod.name;
    info.podUID = k8s.pod.uid;
  }

  if (k8s.node) {
    if (!k8s.pod) {
      // A node-bound token: the node must still be there, the same one.
      const node = await getter.getNode(k8s.node.name ?? "").catch(() => invalidated());
      if ((node.metadata.uid ?? "") !== (k8s.node.uid ?? "")) {
        throw new InvalidTokenError(
          `node UID (${node.metadata.uid}) does not match service account node ref claim (${k8s.node.uid ?? ""})`,
        );
      }
      if (deleted(node)) invalidated();
    }
    // With a pod, the node is only information: the pod's check covers the binding.
    info.nodeName = k8s.node.name;
    info.nodeUID = k8s.node.uid;
  }

  info.credentialID = credentialIDForJTI(claims.jti);
  return info;
}

function invalidated(): never {
  throw new InvalidTokenError("service account token has been invalidated");
}
// #endregion validate
