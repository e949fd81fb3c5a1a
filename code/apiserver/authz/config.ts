/**
 * Authorization config — `--authorization-mode` turned into one authorizer and one rule
 * resolver. Upstream: pkg/kubeapiserver/options/authorization.go (the flag, its default and
 * its checks) and pkg/kubeapiserver/authorizer/config.go (New: one authorizer per mode, in
 * order, behind the `system:masters` authorizer, joined by a union).
 *
 * Solves: the order of modes is the order of judgement (`Node,RBAC`: the Node authorizer
 * first, RBAC when it abstains); a typo in a mode must stop the server at start, not leave
 * it open.
 *
 * Invariants:
 * - no mode given is upstream's default, `AlwaysAllow`;
 * - the modes are upstream's names: AlwaysAllow, AlwaysDeny, ABAC, Webhook, RBAC, Node; an
 *   unknown one or a repeated one is refused with upstream's message; ABAC and Webhook are
 *   known but not built here, and say so;
 * - `system:masters` is allowed before any mode is asked;
 * - with RBAC, the server serves nothing until the bootstrap policy is reconciled and the
 *   RBAC index has listed every role and binding (upstream's post-start hook and informer sync).
 *
 * @upstream kubernetes/kubernetes pkg/kubeapiserver/options/authorization.go (BuiltInAuthorizationOptions: Modes, Validate, Complete)
 * @upstream kubernetes/kubernetes pkg/kubeapiserver/authorizer/config.go (Config.New: the privileged-group authorizer first, then each mode)
 * @upstream kubernetes/kubernetes pkg/kubeapiserver/authorizer/modes/modes.go (AuthorizationModeChoices)
 * @chapter 03-api-security
 */

import type { Store } from "../registry/store.ts";
import type { Authorizer, RuleResolver } from "./authorizer.ts";
import { newNodeAuthorizer } from "./node/node-authorizer.ts";
import { newClusterRoleAggregator } from "./rbac/aggregation.ts";
import type { EscalationDeps } from "./rbac/escalation.ts";
import { RBACIndex } from "./rbac/index.ts";
import { type RBACInformers, runRBACInformers } from "./rbac/informers.ts";
import { RBACAuthorizer } from "./rbac/rbac.ts";
import { ensureRBACPolicy } from "./rbac/reconcile.ts";
import {
  alwaysAllow,
  alwaysDeny,
  systemMastersAuthorizer,
  unionAuthorizer,
  unionRuleResolver,
} from "./union.ts";

// #region modes
export const authorizationModeChoices = [
  "AlwaysAllow",
  "AlwaysDeny",
  "ABAC",
  "Webhook",
  "RBAC",
  "Node",
] as const;
export const defaultAuthorizationModes = ["AlwaysAllow"];

/** Validate: every mode a known one, none twice. Returns upstream's messages (empty: valid). */
export function validateAuthorizationModes(modes: readonly string[]): string[] {
  const errors: string[] = [];
  if (modes.length === 0) errors.push("at least one authorization-mode must be passed");
  for (const m of modes) {
    if (!(authorizationModeChoices as readonly string[]).includes(m)) {
      errors.push(`authorization-mode ${JSON.stringify(m)} is not a valid mode`);
    }
  }
  if (new Set(modes).size !== modes.length) {
    errors.push(`authorization-mode ${JSON.stringify(modes.join(","))} has mode specified more than once`);
  }
  return errors;
}

/** The flag's value as a list (`Node,RBAC` → ["Node", "RBAC"]); empty is the default. */
export function parseAuthorizationModes(flag: string | undefined): string[] {
  const modes = (flag ?? "").split(",").filter((m) => m !== "");
  return modes.length ? modes : [...defaultAuthorizationModes];
}
// #endregion modes

export interface AuthorizationDeps {
  /** The RBAC authorizer, built over the server's RBAC index (server.ts makes it when RBAC is a mode). */
  rbac?: RBACAuthorizer;
  /** The Node authorizer over its graph (code/apiserver/authz/node/), when Node is a mode. */
  node?: Authorizer & RuleResolver;
}

// #region new-authorizer
/** Config.New: the authorizer and the rule resolver for these modes. Throws on a bad or unbuilt mode. */
export function newAuthorizer(
  modes: readonly string[],
  deps: AuthorizationDeps,
): { authorizer: Authorizer; ruleResolver: RuleResolver } {
  const errors = validateAuthorizationModes(modes);
  if (errors.length) throw new AuthorizationConfigError(errors.join("; "));
  const authorizers: Authorizer[] = [systemMastersAuthorizer];
  const resolvers: RuleResolver[] = [];
  for (const mode of modes) {
    switch (mode) {
      case "AlwaysAllow":
        authorizers.push(alwaysAllow);
        resolvers.push(alwaysAllow);
        break;
      case "AlwaysDeny":
        authorizers.push(alwaysDeny);
        resolvers.push(alwaysDeny);
        break;
      case "RBAC":
        if (!deps.rbac) throw new AuthorizationConfigError("authorization-mode RBAC needs the RBAC index");
        authorizers.push(deps.rbac);
        resolvers.push(deps.rbac);
        break;
      case "Node":
        if (!deps.node) throw new AuthorizationConfigError("authorization-mode Node needs the node graph");
        authorizers.push(deps.node);
        resolvers.push(deps.node);
        break;
      default:
        throw new AuthorizationConfigError(`authorization-mode ${mode} is not built in this course`);
    }
  }
  return { authorizer: unionAuthorizer(authorizers), ruleResolver: unionRuleResolver(resolvers) };
}
// #endregion new-authorizer

export class AuthorizationConfigError extends Error {}

// #region start-authorization
/** What the running server holds for authorization (server.ts keeps one). */
export interface AuthorizationRuntime {
  /** The request gate's authorizer; undefined: no gate (chapters 1–2, the insecure port). */
  authorizer?: Authorizer;
  /** What the access reviews ask (with no modes: AlwaysAllow, as the gate). */
  reviews: { authorizer: Authorizer; ruleResolver: RuleResolver };
  /** What the RBAC stores ask before a role or binding is written. */
  escalation: EscalationDeps;
  /** The RBAC index, when RBAC is a mode (tests read its counters). */
  index?: RBACIndex;
  stop(): void;
}

/**
 * The server's authorization, started: with RBAC, the bootstrap policy reconciled, the index
 * listed and watched (the server waits until it has synced), and the aggregation loop running.
 */
export async function startAuthorization(
  stores: Map<string, Store>,
  modes: readonly string[] | undefined,
  explicit: Authorizer | undefined,
  log: (line: string) => void = () => {},
): Promise<AuthorizationRuntime> {
  if (!modes) {
    const authorizer = explicit ?? alwaysAllow;
    const reviews = { authorizer, ruleResolver: alwaysAllow };
    return { authorizer: explicit, reviews, escalation: { authorizer }, stop() {} };
  }
  let index: RBACIndex | undefined;
  let informers: RBACInformers | undefined;
  let rbac: RBACAuthorizer | undefined;
  if (modes.includes("RBAC")) {
    const clusterRoles = stores.get("rbac.authorization.k8s.io/clusterroles") as Store;
    for (const line of await ensureRBACPolicy(
      clusterRoles,
      stores.get("rbac.authorization.k8s.io/clusterrolebindings") as Store,
    )) {
      log(line);
    }
    const idx = new RBACIndex();
    const aggregator = newClusterRoleAggregator(clusterRoles, () => idx.listClusterRoles());
    informers = runRBACInformers(stores, idx, (resource) => {
      if (resource === "clusterroles") aggregator.kick();
    });
    await informers.synced;
    aggregator.kick();
    index = idx;
    rbac = new RBACAuthorizer(idx);
  }
  let node: ReturnType<typeof newNodeAuthorizer> | undefined;
  if (modes.includes("Node")) {
    node = newNodeAuthorizer(stores);
    await node.populator.hasSynced();
  }
  const built = newAuthorizer(modes, { rbac, node });
  return {
    authorizer: built.authorizer,
    reviews: built,
    escalation: { authorizer: built.authorizer, resolver: rbac?.resolver },
    index,
    stop: () => {
      informers?.stop();
      node?.stop();
    },
  };
}
// #endregion start-authorization
