/**
 * serviceaccounts/token — the TokenRequest subresource: `POST
 * /api/v1/namespaces/default/serviceaccounts/build-bot/token` answers a freshly signed,
 * short-lived token for that ServiceAccount (`kubectl create token build-bot`). Upstream:
 * TokenREST in kubernetes pkg/registry/core/serviceaccount/storage/token.go.
 *
 * Solves:
 * - no long-lived secret per ServiceAccount (the pre-1.24 token Secrets, valid forever and
 *   readable by anyone who could read secrets): a token is asked for when needed, lives an hour
 *   by default, and names the audiences it is for;
 * - a token may be bound to a Pod, a Secret or a Node: it stops working when that object is
 *   deleted (claims.ts checks on every request), so a token leaked from a finished pod is dead;
 * - nothing is stored: the answer is computed, signed and forgotten.
 *
 * Invariants:
 * - `spec.expirationSeconds` defaults to 3600, must be at least 600 and at most 2^32 (422
 *   Invalid otherwise); `--service-account-max-token-expiration` shortens a longer request with a
 *   warning instead of refusing it;
 * - `spec.audiences` empty means the API server's own (`--api-audiences`);
 * - a token bound to a pod is only for the pod's own ServiceAccount (400 otherwise); a bound
 *   uid that no longer matches is 409 Conflict (the object was deleted and recreated);
 * - `status.expirationTimestamp` is never later than the token's `exp`.
 *
 * What upstream does differently: the request passes validating admission before signing (the
 * ServiceAccount plugin, and webhooks), and issuing records the token's id in the audit event.
 *
 * @upstream kubernetes/kubernetes pkg/registry/core/serviceaccount/storage/token.go (TokenREST.Create, isKubeAudiences)
 * @upstream kubernetes/kubernetes pkg/apis/authentication/validation/validation.go (ValidateTokenRequest)
 * @upstream kubernetes/kubernetes pkg/apis/authentication/v1/defaults.go (SetDefaults_TokenRequestSpec: 3600 seconds)
 * @chapter 03-api-security
 */
import { type FieldError, invalid } from "../../../api/field-errors.ts";
import type { KubeObject } from "../../../api/meta.ts";
import {
  ExpirationExtensionSeconds,
  serviceAccountClaims,
  WarnOnlyBoundTokenExpirationSeconds,
} from "../../authn/serviceaccount/claims.ts";
import type { JWTTokenGenerator } from "../../authn/serviceaccount/jwt.ts";
import { isStatusError, newBadRequest, newConflict, newInternalError, newInvalid } from "../../errors.ts";
import { nowRFC3339, type Store } from "../store.ts";

export interface BoundObjectReference {
  kind?: string;
  apiVersion?: string;
  name?: string;
  uid?: string;
}

export interface TokenRequest extends KubeObject {
  spec?: {
    audiences?: string[] | null;
    expirationSeconds?: number | null;
    boundObjectRef?: BoundObjectReference | null;
  };
  status?: { token: string; expirationTimestamp: string | null };
}

export interface TokenRESTOptions {
  /** Signs as the first `--service-account-issuer` with `--service-account-signing-key-file`. */
  generator: JWTTokenGenerator;
  /** `--api-audiences`: the audiences of a request that names none. */
  apiAudiences: string[];
  /** `--service-account-max-token-expiration` in seconds; 0 or absent: no limit. */
  maxExpirationSeconds?: number;
  /** `--service-account-extend-token-expiration` (default true). */
  extendExpiration?: boolean;
  now?: () => Date;
}

export interface TokenStores {
  serviceAccounts: Store;
  pods: Store;
  secrets: Store;
  nodes: Store;
}

const defaultExpirationSeconds = 60 * 60;
const minExpirationSeconds = 10 * 60;
const maxExpirationSeconds = 2 ** 32;

// #region validate
/** ValidateTokenRequest: the lifetime's bounds. */
export function validateTokenRequest(req: TokenRequest): FieldError[] {
  const errs: FieldError[] = [];
  const seconds = req.spec?.expirationSeconds ?? 0;
  if (seconds < minExpirationSeconds) {
    errs.push(invalid("spec.expirationSeconds", seconds, "may not specify a duration less than 10 minutes"));
  }
  if (seconds > maxExpirationSeconds) {
    errs.push(
      invalid("spec.expirationSeconds", seconds, "may not specify a duration larger than 2^32 seconds"),
    );
  }
  return errs;
}
// #endregion validate

export class TokenREST {
  constructor(
    private readonly stores: TokenStores,
    private readonly opts: TokenRESTOptions,
  ) {}

  // #region create
  /** TokenREST.Create: the TokenRequest with its status filled in, and any warnings. */
  async create(
    namespace: string,
    name: string,
    req: TokenRequest,
  ): Promise<{ object: TokenRequest; warnings: string[] }> {
    const meta = req.metadata ?? {};
    if (meta.name && meta.name !== name) {
      throw newInvalid("authentication.k8s.io", "TokenRequest", name, [
        invalid("metadata.name", meta.name, "must match the service account name if specified"),
      ]);
    }
    if (meta.namespace && meta.namespace !== namespace) {
      throw newInvalid("authentication.k8s.io", "TokenRequest", name, [
        invalid(
          "metadata.namespace",
          meta.namespace,
          "must match the service account namespace if specified",
        ),
      ]);
    }
    const sa = await this.stores.serviceAccounts.get(namespace, name);

    const spec = { ...(req.spec ?? {}) };
    if (!spec.audiences || spec.audiences.length === 0) spec.audiences = [...this.opts.apiAudiences];
    spec.expirationSeconds ??= defaultExpirationSeconds;
    // Taken before signing, so that the expiration in the status is never after the token's `exp`.
    const now = this.opts.now?.() ?? new Date();
    const out: TokenRequest = {
      ...req,
      apiVersion: "authentication.k8s.io/v1",
      kind: "TokenRequest",
      metadata: {
        ...meta,
        name: meta.name || name,
        namespace: meta.namespace || namespace,
        creationTimestamp: nowRFC3339(now),
      },
      spec,
    };
    delete out.status;
    const errs = validateTokenRequest(out);
    if (errs.length > 0) throw newInvalid("authentication.k8s.io", "TokenRequest", "", errs);

    const bound = await this.boundObjects(namespace, name, spec.boundObjectRef ?? undefined);

    const warnings: string[] = [];
    const max = this.opts.maxExpirationSeconds ?? 0;
    if (max > 0 && spec.expirationSeconds > max) {
      warnings.push(`requested expiration of ${spec.expirationSeconds} seconds shortened to ${max} seconds`);
      spec.expirationSeconds = max;
    }
    // The safe roll-out of bound pod tokens: a kubelet asking for exactly 3607 seconds gets a
    // token that works for a year but is flagged as stale after the hour.
    let exp = spec.expirationSeconds;
    let warnAfter = 0;
    const kubeAudiences = spec.audiences.every((a) => this.opts.apiAudiences.includes(a));
    if (
      (this.opts.extendExpiration ?? true) &&
      bound.pod &&
      exp === WarnOnlyBoundTokenExpirationSeconds &&
      kubeAudiences
    ) {
      warnAfter = exp;
      exp = ExpirationExtensionSeconds;
    }

    const claims = serviceAccountClaims(sa, bound, exp, warnAfter, spec.audiences, now);
    const token = await this.opts.generator.generateToken(claims);
    out.status = {
      token,
      expirationTimestamp: nowRFC3339(new Date(now.getTime() + spec.expirationSeconds * 1000)),
    };
    return { object: out, warnings };
  }
  // #endregion create

  // #region bound-object
  /** The object a token is bound to, read now so that its uid goes into the token. */
  private async boundObjects(
    namespace: string,
    saName: string,
    ref: BoundObjectReference | undefined,
  ): Promise<{ pod?: KubeObject; secret?: KubeObject; node?: KubeObject }> {
    if (!ref) return {};
    const apiVersion = ref.apiVersion ?? "";
    const [group, version] = apiVersion.includes("/") ? apiVersion.split("/", 2) : ["", apiVersion];
    const refName = ref.name ?? "";
    let result: { pod?: KubeObject; secret?: KubeObject; node?: KubeObject };
    let uid: string | undefined;
    if (group === "" && ref.kind === "Pod") {
      const pod = await this.stores.pods.get(namespace, refName);
      const podSA = (pod.spec as { serviceAccountName?: string } | undefined)?.serviceAccountName ?? "";
      if (saName !== podSA) {
        throw newBadRequest(
          `cannot bind token for serviceaccount "${saName}" to pod running with different serviceaccount name.`,
        );
      }
      uid = pod.metadata.uid;
      result = { pod, node: await this.nodeOf(pod) };
    } else if (group === "" && ref.kind === "Node") {
      const node = await this.stores.nodes.get("", refName);
      uid = node.metadata.uid;
      result = { node };
    } else if (group === "" && ref.kind === "Secret") {
      const secret = await this.stores.secrets.get(namespace, refName);
      uid = secret.metadata.uid;
      result = { secret };
    } else {
      throw newBadRequest(`cannot bind token to object of type ${group}/${version}, Kind=${ref.kind ?? ""}`);
    }
    if (ref.uid && ref.uid !== uid) {
      throw newConflict(
        { group, resource: ref.kind },
        refName,
        `the UID in the bound object reference (${ref.uid}) does not match the UID in record. The object might have been deleted and then recreated`,
      );
    }
    return result;
  }

  /** The pod's node, for the token's information; only its name if the Node object is missing. */
  private async nodeOf(pod: KubeObject): Promise<KubeObject | undefined> {
    const nodeName = (pod.spec as { nodeName?: string } | undefined)?.nodeName;
    if (!nodeName) return undefined;
    try {
      return await this.stores.nodes.get("", nodeName);
    } catch (e) {
      if (isStatusError(e) && e.code === 404)
        return { apiVersion: "v1", kind: "Node", metadata: { name: nodeName } };
      throw newInternalError((e as Error).message);
    }
  }
  // #endregion bound-object
}

/** The TokenREST over this server's stores (the map startAPIServer builds, keyed `group/resource`). */
export function newTokenREST(stores: ReadonlyMap<string, Store>, opts: TokenRESTOptions): TokenREST {
  const store = (resource: string) => stores.get(`/${resource}`) as Store;
  return new TokenREST(
    {
      serviceAccounts: store("serviceaccounts"),
      pods: store("pods"),
      secrets: store("secrets"),
      nodes: store("nodes"),
    },
    opts,
  );
}
