/**
 * The policy source — every ValidatingAdmissionPolicy with its bindings, compiled once, kept in
 * memory from two informers over the API server's own stores (registry/store-informer.ts, as the
 * RBAC index and the Node graph read theirs). Upstream: k8s.io/apiserver
 * pkg/admission/plugin/policy/generic/policy_source.go (policySource: informers, compile on change).
 *
 * Solves:
 * - admitting a pod must not list policies or parse CEL: `hooks()` is a read of memory, and a
 *   policy's expressions are compiled when the policy (its resourceVersion) changes, not per request;
 * - a binding may be created before its policy, or outlive it: bindings are grouped by
 *   `spec.policyName` and joined to a policy only when one of that name exists.
 *
 * Invariants:
 * - `hooks()` lists policies sorted by name, each with its bindings sorted by name; a policy
 *   without a binding is listed with none (and judges nothing);
 * - a compiled policy is cached by uid and resourceVersion: an update recompiles, a read reuses;
 * - an expression that fails to compile here (it was stored before a stricter check, or the
 *   check differs) becomes a program that fails when run, so failurePolicy decides, as upstream.
 *
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/admission/plugin/policy/generic/policy_source.go (policySource.Hooks, refreshPolicies)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/admission/plugin/policy/validating/plugin.go (compilePolicy)
 * @chapter 03-api-security
 */

import type { KubeObject } from "../../../api/meta.ts";
import type {
  ValidatingAdmissionPolicy,
  ValidatingAdmissionPolicyBinding,
  Validation,
} from "../../../api/validatingadmissionpolicy.ts";
import type { Store } from "../../registry/store.ts";
import { StoreInformer } from "../../registry/store-informer.ts";
import { CELEvaluationError, compile, type ExpressionReturn, type Program } from "./cel.ts";

export interface CompiledValidation {
  validation: Validation;
  program: Program;
  message?: Program;
}

export interface CompiledPolicy {
  matchConditions: { name: string; program: Program }[];
  auditAnnotations: { key: string; program: Program }[];
  variables: { name: string; program: Program }[];
  validations: CompiledValidation[];
}

/** One policy and what judging with it needs (upstream: PolicyHook). */
export interface PolicyHook {
  policy: ValidatingAdmissionPolicy;
  compiled: CompiledPolicy;
  bindings: ValidatingAdmissionPolicyBinding[];
}

/** What the plugin reads (upstream: generic.Source — Hooks, HasSynced). */
export interface PolicyHookSource {
  readonly ready: Promise<void>;
  hooks(): PolicyHook[];
  stop(): void;
}

// #region compile-policy
function programOf(expression: string, returns: ExpressionReturn, hasParams: boolean): Program {
  const result = compile(expression, returns, hasParams);
  if (result.ok) return result.program;
  return {
    expression,
    run() {
      throw new CELEvaluationError(result.detail);
    },
  };
}

export function compilePolicy(policy: ValidatingAdmissionPolicy): CompiledPolicy {
  const spec = policy.spec ?? {};
  const hasParams = spec.paramKind != null;
  return {
    matchConditions: (spec.matchConditions ?? []).map((c) => ({
      name: c.name,
      program: programOf(c.expression, "bool", hasParams),
    })),
    auditAnnotations: (spec.auditAnnotations ?? []).map((a) => ({
      key: a.key,
      program: programOf(a.valueExpression.trim(), "string-or-null", hasParams),
    })),
    variables: (spec.variables ?? []).map((v) => ({
      name: v.name,
      program: programOf(v.expression, "any", hasParams),
    })),
    validations: (spec.validations ?? []).map((v) => ({
      validation: v,
      program: programOf(v.expression, "bool", hasParams),
      message: v.messageExpression ? programOf(v.messageExpression, "string", hasParams) : undefined,
    })),
  };
}
// #endregion compile-policy

// #region source
export class PolicySource implements PolicyHookSource {
  private readonly policies = new Map<string, ValidatingAdmissionPolicy>();
  private readonly bindings = new Map<string, ValidatingAdmissionPolicyBinding>();
  private readonly compiled = new Map<string, { key: string; compiled: CompiledPolicy }>();
  private cached: PolicyHook[] | undefined;
  private readonly informers: StoreInformer[];
  readonly ready: Promise<void>;

  constructor(policyStore: Store, bindingStore: Store) {
    const follow = (into: Map<string, KubeObject>) => ({
      add: (obj: KubeObject) => this.put(into, obj),
      update: (_old: KubeObject, obj: KubeObject) => this.put(into, obj),
      delete: (obj: KubeObject) => {
        into.delete(obj.metadata.name ?? "");
        this.cached = undefined;
      },
    });
    this.informers = [
      new StoreInformer(policyStore, follow(this.policies as Map<string, KubeObject>)),
      new StoreInformer(bindingStore, follow(this.bindings as Map<string, KubeObject>)),
    ];
    for (const i of this.informers) void i.run();
    this.ready = Promise.all(this.informers.map((i) => i.synced)).then(() => undefined);
    this.ready.catch(() => {}); // a closing server: the plugin's await reports it
  }

  private put(into: Map<string, KubeObject>, obj: KubeObject): void {
    into.set(obj.metadata.name ?? "", obj);
    this.cached = undefined;
  }

  private compiledFor(policy: ValidatingAdmissionPolicy): CompiledPolicy {
    const name = policy.metadata.name ?? "";
    const key = `${policy.metadata.uid ?? ""}/${policy.metadata.resourceVersion ?? ""}`;
    const hit = this.compiled.get(name);
    if (hit?.key === key) return hit.compiled;
    const compiled = compilePolicy(policy);
    this.compiled.set(name, { key, compiled });
    return compiled;
  }

  /** Every policy with its bindings (upstream: Hooks). */
  hooks(): PolicyHook[] {
    if (!this.cached) {
      const byPolicy = new Map<string, ValidatingAdmissionPolicyBinding[]>();
      for (const name of [...this.bindings.keys()].sort()) {
        const b = this.bindings.get(name) as ValidatingAdmissionPolicyBinding;
        const list = byPolicy.get(b.spec?.policyName ?? "") ?? [];
        list.push(b);
        byPolicy.set(b.spec?.policyName ?? "", list);
      }
      for (const name of this.compiled.keys()) if (!this.policies.has(name)) this.compiled.delete(name);
      this.cached = [...this.policies.keys()].sort().map((name) => {
        const policy = this.policies.get(name) as ValidatingAdmissionPolicy;
        return { policy, compiled: this.compiledFor(policy), bindings: byPolicy.get(name) ?? [] };
      });
    }
    return this.cached;
  }

  stop(): void {
    for (const i of this.informers) i.stop();
  }
}
// #endregion source
