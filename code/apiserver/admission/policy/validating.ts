/**
 * ValidatingAdmissionPolicy — the admission plugin that judges every write by the CEL policies
 * bound in the cluster: for each policy that matches, each binding that matches too, each param
 * it names, evaluate the validations and act on each failure as the binding says (Deny, Warn,
 * Audit). Upstream: k8s.io/apiserver pkg/admission/plugin/policy/validating/plugin.go and
 * dispatcher.go (dispatcher.Dispatch).
 *
 * Solves:
 * - the common policies ("at most 5 replicas", "every pod has a team label") run inside the API
 *   server: no network hop, no certificate, no webhook that can be down;
 * - a new policy can be tried safely: a binding with `validationActions: [Warn]` tells the
 *   client (`Warning: Validation failed for ValidatingAdmissionPolicy …`) and `[Audit]` records
 *   it in the audit log, while nothing is refused; switching to `[Deny]` is one edit;
 * - a broken policy or binding (a missing param, a namespace that cannot be read) is a
 *   configuration error, which failurePolicy turns into a denial (Fail) or nothing (Ignore).
 *
 * Invariants:
 * - every matching policy and binding is evaluated, and warnings and audit annotations of all
 *   of them are kept; the first denial collected is the one the client sees;
 * - a policy's `auditAnnotations` are published as `<policy>/<key>`, the distinct values its
 *   bindings produced joined by ", ";
 * - the denial is a 403-shaped `<resource> "<name>" is forbidden: ValidatingAdmissionPolicy
 *   '<policy>' with binding '<binding>' denied request: <message>` whose reason and code are the
 *   validation's reason (Invalid: 422 by default);
 * - the policy and binding objects themselves, and the webhook configurations, are never judged.
 *
 * What upstream does differently: the request's object is converted to the version the rule
 * matched (here every resource has one version); the `authorizer` variable and the cost budget
 * are missing (cel.ts).
 *
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/admission/plugin/policy/validating/dispatcher.go (dispatcher.Dispatch, publishValidationFailureAnnotation, ValidationFailureValue)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/admission/plugin/policy/validating/plugin.go (PluginName)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/admission/plugin/policy/generic/plugin.go (Plugin.Dispatch: exempt resources, wait for sync)
 * @chapter 03-api-security
 */
import type { KubeObject } from "../../../api/meta.ts";
import type {
  ValidatingAdmissionPolicy,
  ValidatingAdmissionPolicyBinding,
} from "../../../api/validatingadmissionpolicy.ts";
import type { Store } from "../../registry/store.ts";
import type { PluginContext } from "../context.ts";
import { newAdmissionForbidden } from "../errors.ts";
import type { Attributes, Operation, ValidationInterface } from "../interfaces.ts";
import { depsFromStores } from "../webhook/generic.ts";
import type { NamespaceGetter } from "../webhook/matchers.ts";
import { isExemptAdmissionConfigurationResource } from "../webhook/rules.ts";
import type { ActivationInput } from "./cel.ts";
import { matches } from "./matching.ts";
import { collectParams } from "./params.ts";
import { type PolicyHookSource, PolicySource } from "./source.ts";
import { type PolicyDecision, reasonToCode, validatePolicy } from "./validator.ts";

export const PluginName = "ValidatingAdmissionPolicy";

export const validationFailureAnnotation = "validation.policy.admission.k8s.io/validation_failure";

export interface PolicyDeps {
  getNamespace: NamespaceGetter;
  store(group: string, resource: string): Store | undefined;
}

interface Denial {
  decision: PolicyDecision;
  policy: ValidatingAdmissionPolicy;
  binding?: ValidatingAdmissionPolicyBinding;
}

// #region request
/** CreateAdmissionRequest: the `request` variable (the AdmissionRequest without the objects). */
export function admissionRequestOf(
  a: Attributes,
  resource: Attributes["resource"],
  kind: Attributes["kind"],
) {
  const userInfo: Record<string, unknown> = { username: a.userInfo.name, groups: a.userInfo.groups };
  if (a.userInfo.uid) userInfo.uid = a.userInfo.uid;
  if (a.userInfo.extra) userInfo.extra = a.userInfo.extra;
  return {
    kind,
    resource,
    subResource: a.subresource,
    requestKind: a.kind,
    requestResource: a.resource,
    requestSubResource: a.subresource,
    name: a.name,
    namespace: a.namespace,
    operation: a.operation,
    userInfo,
    dryRun: a.dryRun,
    options: a.options ?? null,
  };
}

/** CreateNamespaceObject: the namespace's metadata (the parts CEL may read), spec and status. */
export function namespaceObjectOf(ns: KubeObject): KubeObject {
  const m = ns.metadata;
  const metadata: Record<string, unknown> = {};
  for (const k of [
    "name",
    "generateName",
    "namespace",
    "labels",
    "annotations",
    "uid",
    "creationTimestamp",
  ] as const) {
    if (m[k] !== undefined) metadata[k] = m[k];
  }
  return { apiVersion: "v1", kind: "Namespace", metadata, spec: ns.spec, status: ns.status } as KubeObject;
}
// #endregion request

export class ValidatingAdmissionPolicyPlugin implements ValidationInterface {
  readonly name = PluginName;

  constructor(
    private readonly source: PolicyHookSource,
    private readonly deps: PolicyDeps,
  ) {}

  handles(_op: Operation): boolean {
    return true;
  }

  close(): void {
    this.source.stop();
  }

  // #region dispatch
  async validate(a: Attributes): Promise<void> {
    if (isExemptAdmissionConfigurationResource(a)) return;
    await this.source.ready;
    const denials: Denial[] = [];
    const configError = (
      err: unknown,
      policy: ValidatingAdmissionPolicy,
      binding?: ValidatingAdmissionPolicyBinding,
    ) => {
      if (policy.spec.failurePolicy === "Ignore") return;
      const what = binding ? "binding" : "policy";
      const message = `failed to configure ${what}: ${err instanceof Error ? err.message : String(err)}`;
      denials.push({ decision: { action: "deny", evaluation: "error", message }, policy, binding });
    };

    for (const { policy, compiled, bindings } of this.source.hooks()) {
      const constraints = policy.spec?.matchConstraints;
      if (!constraints) continue;
      let matched: Awaited<ReturnType<typeof matches>>;
      try {
        matched = await matches(constraints, a, this.deps.getNamespace);
      } catch (e) {
        configError(e, policy);
        continue;
      }
      if (!matched) continue;
      const published = new Map<string, string[]>();
      for (const binding of bindings) {
        try {
          if (
            binding.spec.matchResources &&
            !(await matches(binding.spec.matchResources, a, this.deps.getNamespace))
          )
            continue;
        } catch (e) {
          configError(e, policy, binding);
          continue;
        }
        let params: (KubeObject | null)[];
        try {
          params = await collectParams(
            policy.spec.paramKind,
            binding.spec.paramRef,
            a.namespace,
            this.deps.store,
          );
        } catch (e) {
          configError(e, policy, binding);
          continue;
        }
        // A Namespace carries its own name as namespace: it has no namespaceObject.
        const isNamespace = a.kind.group === "" && a.kind.version === "v1" && a.kind.kind === "Namespace";
        const namespaceName = isNamespace ? "" : a.namespace;
        const namespaceObject = namespaceName
          ? namespaceObjectOf(await this.deps.getNamespace(namespaceName))
          : null;
        const request = admissionRequestOf(a, matched.resource, matched.kind);
        for (const param of params) {
          const input: ActivationInput = {
            object: a.object ?? null,
            oldObject: a.oldObject ?? null,
            request,
            params: param,
            namespaceObject,
          };
          const result = validatePolicy(compiled, policy.spec.failurePolicy, input);
          result.decisions.forEach((decision, i) => {
            if (decision.action !== "deny") return;
            this.act(a, policy, binding, decision, i, denials);
          });
          for (const ann of result.auditAnnotations) {
            if (ann.action === "publish" && ann.value !== undefined) {
              const values = published.get(ann.key) ?? [];
              if (!values.includes(ann.value)) values.push(ann.value); // same value from two bindings: once
              published.set(ann.key, values);
            } else if (ann.action === "error") {
              // Under Fail an audit annotation that cannot be computed denies, whatever the actions.
              denials.push({
                decision: { action: "deny", evaluation: "error", message: ann.error ?? "" },
                policy,
                binding,
              });
            }
          }
        }
      }
      // auditAnnotationCollector.publish: `<policy>/<key>`, distinct values joined by ", ".
      for (const [key, values] of published) {
        const name = `${policy.metadata.name ?? ""}/${key}`;
        if (a.annotations && a.annotations[name] === undefined) a.annotations[name] = values.join(", ");
      }
    }
    if (denials.length > 0) throw this.denialError(a, denials[0]);
  }
  // #endregion dispatch

  // #region validation-actions
  /** One failed validation, done as each of the binding's validationActions says. */
  private act(
    a: Attributes,
    policy: ValidatingAdmissionPolicy,
    binding: ValidatingAdmissionPolicyBinding,
    decision: PolicyDecision,
    expressionIndex: number,
    denials: Denial[],
  ): void {
    const policyName = policy.metadata.name ?? "";
    for (const action of binding.spec.validationActions ?? []) {
      if (action === "Deny") denials.push({ decision, policy, binding });
      else if (action === "Warn") {
        a.warnings?.push(
          `Validation failed for ValidatingAdmissionPolicy '${policyName}' with binding '${binding.metadata.name}': ${decision.message}`,
        );
      } else if (action === "Audit") {
        const value = JSON.stringify([
          {
            message: decision.message,
            policy: binding.spec.policyName,
            binding: binding.metadata.name,
            expressionIndex,
            validationActions: binding.spec.validationActions,
          },
        ]);
        // Upstream's AddAnnotation keeps the first value a key was given.
        if (a.annotations && a.annotations[validationFailureAnnotation] === undefined) {
          a.annotations[validationFailureAnnotation] = value;
        }
      }
    }
  }
  // #endregion validation-actions

  // #region denial
  private denialError(a: Attributes, d: Denial) {
    const policyName = d.policy.metadata.name ?? "";
    const message = d.binding
      ? `ValidatingAdmissionPolicy '${policyName}' with binding '${d.binding.metadata.name}' denied request: ${d.decision.message}`
      : `ValidatingAdmissionPolicy '${policyName}' denied request: ${d.decision.message}`;
    const err = newAdmissionForbidden(a, message);
    const reason = d.decision.reason || "Invalid";
    err.status.reason = reason as typeof err.status.reason;
    err.status.code = reasonToCode(reason);
    err.status.details ??= {};
    err.status.details.causes = [...(err.status.details.causes ?? []), { message }];
    return err;
  }
  // #endregion denial
}

/** The plugin over the API server's own stores (registered in admission/plugins.ts). */
export function newValidatingAdmissionPolicy(ctx: PluginContext): ValidatingAdmissionPolicyPlugin {
  const storeOf = (resource: string) => {
    const store = ctx.store("admissionregistration.k8s.io", resource);
    if (!store) throw new Error(`admission: no store for ${resource}.admissionregistration.k8s.io`);
    return store;
  };
  const source = new PolicySource(
    storeOf("validatingadmissionpolicies"),
    storeOf("validatingadmissionpolicybindings"),
  );
  const deps = depsFromStores(ctx.store);
  return new ValidatingAdmissionPolicyPlugin(source, {
    getNamespace: deps.getNamespace,
    store: (group, resource) => ctx.store(group, resource),
  });
}
