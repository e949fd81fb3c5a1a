import { describe, expect, it } from "vitest";
import type { KubeObject } from "../../../api/meta.ts";
import {
  setDefaultsValidatingAdmissionPolicy,
  setDefaultsValidatingAdmissionPolicyBinding,
  type ValidatingAdmissionPolicy,
  type ValidatingAdmissionPolicyBinding,
  type ValidatingAdmissionPolicyBindingSpec,
  type ValidatingAdmissionPolicySpec,
} from "../../../api/validatingadmissionpolicy.ts";
import { isStatusError, newNotFound, type StatusError } from "../../errors.ts";
import type { Store } from "../../registry/store.ts";
import type { Attributes } from "../interfaces.ts";
import { compilePolicy, type PolicyHookSource } from "./source.ts";
import {
  type PolicyDeps,
  ValidatingAdmissionPolicyPlugin,
  validationFailureAnnotation,
} from "./validating.ts";

const deployment = (replicas: number, labels: Record<string, string> = {}): KubeObject => ({
  apiVersion: "apps/v1",
  kind: "Deployment",
  metadata: { name: "web", namespace: "default", labels },
  spec: { replicas },
});

const attrs = (over: Partial<Attributes> = {}): Attributes => ({
  name: "web",
  namespace: "default",
  resource: { group: "apps", version: "v1", resource: "deployments" },
  subresource: "",
  kind: { group: "apps", version: "v1", kind: "Deployment" },
  operation: "CREATE",
  dryRun: false,
  object: deployment(3),
  userInfo: { name: "jane", groups: ["system:authenticated"] },
  warnings: [],
  annotations: {},
  ...over,
});

const deploymentsRule = {
  apiGroups: ["apps"],
  apiVersions: ["v1"],
  operations: ["CREATE" as const, "UPDATE" as const],
  resources: ["deployments"],
};

function policy(name: string, spec: Partial<ValidatingAdmissionPolicySpec>): ValidatingAdmissionPolicy {
  const p: ValidatingAdmissionPolicy = {
    apiVersion: "admissionregistration.k8s.io/v1",
    kind: "ValidatingAdmissionPolicy",
    metadata: { name },
    spec: { matchConstraints: { resourceRules: [deploymentsRule] }, ...spec },
  };
  setDefaultsValidatingAdmissionPolicy(p);
  return p;
}

function binding(
  name: string,
  policyName: string,
  spec: Partial<ValidatingAdmissionPolicyBindingSpec> = {},
): ValidatingAdmissionPolicyBinding {
  const b: ValidatingAdmissionPolicyBinding = {
    apiVersion: "admissionregistration.k8s.io/v1",
    kind: "ValidatingAdmissionPolicyBinding",
    metadata: { name },
    spec: { policyName, validationActions: ["Deny"], ...spec },
  };
  setDefaultsValidatingAdmissionPolicyBinding(b);
  return b;
}

const source = (
  pairs: [ValidatingAdmissionPolicy, ValidatingAdmissionPolicyBinding[]][],
): PolicyHookSource => ({
  ready: Promise.resolve(),
  hooks: () => pairs.map(([p, bindings]) => ({ policy: p, compiled: compilePolicy(p), bindings })),
  stop: () => {},
});

const namespaces: Record<string, KubeObject> = {
  default: { apiVersion: "v1", kind: "Namespace", metadata: { name: "default", labels: { env: "dev" } } },
  prod: { apiVersion: "v1", kind: "Namespace", metadata: { name: "prod", labels: { env: "prod" } } },
};

/** A ConfigMap store of params (only get and list are read). */
function configMaps(objs: KubeObject[]): Store {
  return {
    get: async (ns: string, name: string) => {
      const o = objs.find((x) => x.metadata.namespace === ns && x.metadata.name === name);
      if (!o) throw newNotFound({ group: "", resource: "configmaps" }, name);
      return o;
    },
    list: async (ns: string) => ({
      items: objs.filter((x) => x.metadata.namespace === ns),
      resourceVersion: "1",
    }),
  } as unknown as Store;
}

const deps = (params: KubeObject[] = []): PolicyDeps => ({
  getNamespace: async (name) => {
    const ns = namespaces[name];
    if (!ns) throw newNotFound({ group: "", resource: "namespaces" }, name);
    return ns;
  },
  store: (group, resource) => (group === "" && resource === "configmaps" ? configMaps(params) : undefined),
});

const plugin = (
  pairs: [ValidatingAdmissionPolicy, ValidatingAdmissionPolicyBinding[]][],
  params?: KubeObject[],
) => new ValidatingAdmissionPolicyPlugin(source(pairs), deps(params));

async function refusal(p: Promise<void>): Promise<StatusError> {
  try {
    await p;
  } catch (e) {
    if (isStatusError(e)) return e;
    throw e;
  }
  throw new Error("expected a refusal");
}

const maxReplicas = policy("demo-policy.example.com", {
  validations: [{ expression: "object.spec.replicas <= 5", message: "replicas must be no greater than 5" }],
});

describe("ValidatingAdmissionPolicy: validations and their messages", () => {
  it("denies with upstream's message, reason Invalid and code 422, and the message as a cause", async () => {
    const p = plugin([[maxReplicas, [binding("demo-binding", "demo-policy.example.com")]]]);
    await p.validate(attrs()); // 3 replicas: admitted
    const err = await refusal(p.validate(attrs({ object: deployment(6) })));
    const message =
      "ValidatingAdmissionPolicy 'demo-policy.example.com' with binding 'demo-binding' denied request: replicas must be no greater than 5";
    expect(err.status).toMatchObject({
      code: 422,
      reason: "Invalid",
      message: `deployments.apps "web" is forbidden: ${message}`,
      details: { name: "web", group: "apps", kind: "deployments", causes: [{ message }] },
    });
  });

  it("takes the code from the validation's reason", async () => {
    const p = plugin([
      [policy("p", { validations: [{ expression: "false", reason: "Forbidden" }] }), [binding("b", "p")]],
    ]);
    const err = await refusal(p.validate(attrs()));
    expect([err.status.code, err.status.reason]).toEqual([403, "Forbidden"]);
    expect(err.message).toMatch(/denied request: failed expression: false$/);
  });

  it("prefers messageExpression, falls back to message when it fails or is blank", async () => {
    const withExpr = (messageExpression: string) =>
      plugin([
        [
          policy("p", {
            validations: [{ expression: "object.spec.replicas <= 5", message: "static", messageExpression }],
          }),
          [binding("b", "p")],
        ],
      ]);
    const over = attrs({ object: deployment(7) });
    expect((await refusal(withExpr("'got ' + string(object.spec.replicas)").validate(over))).message).toMatch(
      /denied request: got 7$/,
    );
    expect((await refusal(withExpr("object.nope").validate(over))).message).toMatch(
      /denied request: static$/,
    );
    expect((await refusal(withExpr("'  '").validate(over))).message).toMatch(/denied request: static$/);
  });

  it("reads request, oldObject, namespaceObject and variables (each variable evaluated once)", async () => {
    const p = plugin([
      [
        policy("p", {
          variables: [
            { name: "limit", expression: "namespaceObject.metadata.labels.env == 'prod' ? 10 : 2" },
            { name: "over", expression: "object.spec.replicas > variables.limit" },
          ],
          validations: [
            { expression: "!variables.over", messageExpression: "'limit is ' + string(variables.limit)" },
            { expression: "request.userInfo.username != 'mallory'", message: "not you" },
            {
              expression: "oldObject == null || oldObject.spec.replicas <= object.spec.replicas",
              message: "no scale-down",
            },
          ],
        }),
        [binding("b", "p")],
      ],
    ]);
    await p.validate(attrs({ namespace: "prod", object: deployment(8) }));
    expect((await refusal(p.validate(attrs({ object: deployment(3) })))).message).toMatch(/limit is 2$/);
    expect(
      (await refusal(p.validate(attrs({ object: deployment(1), userInfo: { name: "mallory", groups: [] } }))))
        .message,
    ).toMatch(/not you$/);
    const update = attrs({ operation: "UPDATE", object: deployment(1), oldObject: deployment(2) });
    expect((await refusal(p.validate(update))).message).toMatch(/no scale-down$/);
  });
});

describe("ValidatingAdmissionPolicy: failurePolicy", () => {
  const broken = (failurePolicy: "Fail" | "Ignore") =>
    plugin([
      [
        policy("p", { failurePolicy, validations: [{ expression: "object.spec.missing > 1" }] }),
        [binding("b", "p")],
      ],
    ]);

  it("Fail: an evaluation error denies with upstream's error text", async () => {
    const err = await refusal(broken("Fail").validate(attrs()));
    expect(err.message).toBe(
      `deployments.apps "web" is forbidden: ValidatingAdmissionPolicy 'p' with binding 'b' denied request: expression 'object.spec.missing > 1' resulted in error: No such key: missing`,
    );
  });

  it("Ignore: an evaluation error admits", async () => {
    await expect(broken("Ignore").validate(attrs())).resolves.toBeUndefined();
  });

  it("a false match condition skips the policy; an erroring one follows failurePolicy", async () => {
    const p = (failurePolicy: "Fail" | "Ignore", expression: string) =>
      plugin([
        [
          policy("p", {
            failurePolicy,
            matchConditions: [{ name: "c", expression }],
            validations: [{ expression: "false" }],
          }),
          [binding("b", "p")],
        ],
      ]);
    await p("Fail", "'skip' in object.metadata.labels == false && false").validate(attrs());
    expect((await refusal(p("Fail", "true").validate(attrs()))).message).toMatch(/failed expression: false$/);
    expect((await refusal(p("Fail", "object.nope").validate(attrs()))).message).toMatch(
      /denied request: expression 'object.nope' resulted in error: No such key: nope$/,
    );
    await p("Ignore", "object.nope").validate(attrs());
  });
});

describe("ValidatingAdmissionPolicy: validationActions", () => {
  it("Warn adds a warning and admits; Audit adds the validation_failure annotation and admits", async () => {
    const a = attrs({ object: deployment(9) });
    await plugin([
      [maxReplicas, [binding("warn", "demo-policy.example.com", { validationActions: ["Warn", "Audit"] })]],
    ]).validate(a);
    expect(a.warnings).toEqual([
      "Validation failed for ValidatingAdmissionPolicy 'demo-policy.example.com' with binding 'warn': replicas must be no greater than 5",
    ]);
    expect(JSON.parse(a.annotations?.[validationFailureAnnotation] ?? "null")).toEqual([
      {
        message: "replicas must be no greater than 5",
        policy: "demo-policy.example.com",
        binding: "warn",
        expressionIndex: 0,
        validationActions: ["Warn", "Audit"],
      },
    ]);
  });

  it("Deny with Audit both refuses and records", async () => {
    const a = attrs({ object: deployment(9) });
    await refusal(
      plugin([
        [maxReplicas, [binding("d", "demo-policy.example.com", { validationActions: ["Deny", "Audit"] })]],
      ]).validate(a),
    );
    expect(a.annotations?.[validationFailureAnnotation]).toContain('"binding":"d"');
    expect(a.warnings).toEqual([]);
  });
});

describe("ValidatingAdmissionPolicy: auditAnnotations", () => {
  const audited = (valueExpression: string, failurePolicy: "Fail" | "Ignore" = "Fail") =>
    policy("audit.example.com", {
      failurePolicy,
      validations: [{ expression: "true" }],
      auditAnnotations: [{ key: "replicas", valueExpression }],
    });

  it("publishes `<policy>/<key>`, each distinct value once, joined across bindings", async () => {
    const a = attrs();
    await plugin([
      [
        audited("'replicas=' + string(object.spec.replicas)"),
        [binding("one", "audit.example.com"), binding("two", "audit.example.com")],
      ],
    ]).validate(a);
    expect(a.annotations).toEqual({ "audit.example.com/replicas": "replicas=3" });
  });

  it("null is not published; a non-string value denies under Fail and is dropped under Ignore", async () => {
    const a = attrs();
    await plugin([[audited("null"), [binding("b", "audit.example.com")]]]).validate(a);
    expect(a.annotations).toEqual({});
    const err = await refusal(
      plugin([[audited("object.spec.replicas"), [binding("b", "audit.example.com")]]]).validate(attrs()),
    );
    expect(err.message).toMatch(
      /denied request: valueExpression 'object.spec.replicas' resulted in unsupported return type: int. Return type must be either string or null.$/,
    );
    await plugin([[audited("object.spec.replicas", "Ignore"), [binding("b", "audit.example.com")]]]).validate(
      attrs(),
    );
  });
});

describe("ValidatingAdmissionPolicy: matching", () => {
  it("judges nothing without a binding, and a binding narrows its policy by namespace", async () => {
    const big = attrs({ object: deployment(9) });
    await plugin([[maxReplicas, []]]).validate(big);
    const narrowed = binding("prod-only", "demo-policy.example.com", {
      matchResources: { namespaceSelector: { matchLabels: { env: "prod" } } },
    });
    const p = plugin([[maxReplicas, [narrowed]]]);
    await p.validate(big); // namespace default is env=dev
    await refusal(p.validate(attrs({ namespace: "prod", object: deployment(9) })));
  });

  it("excludeResourceRules win; resourceNames restrict; other resources and the policy kinds are not judged", async () => {
    const p = (spec: Partial<ValidatingAdmissionPolicySpec>) =>
      plugin([[policy("p", { validations: [{ expression: "false" }], ...spec }), [binding("b", "p")]]]);
    await p({
      matchConstraints: {
        resourceRules: [deploymentsRule],
        excludeResourceRules: [{ ...deploymentsRule, resourceNames: ["web"] }],
      },
    }).validate(attrs());
    const named = p({
      matchConstraints: { resourceRules: [{ ...deploymentsRule, resourceNames: ["other"] }] },
    });
    await named.validate(attrs());
    await refusal(named.validate(attrs({ name: "other" })));
    const pods = attrs({
      resource: { group: "", version: "v1", resource: "pods" },
      kind: { group: "", version: "v1", kind: "Pod" },
    });
    await p({}).validate(pods);
    const everything = p({
      matchConstraints: { resourceRules: [{ ...deploymentsRule, apiGroups: ["*"], resources: ["*"] }] },
    });
    await everything.validate(
      attrs({
        namespace: "",
        resource: {
          group: "admissionregistration.k8s.io",
          version: "v1",
          resource: "validatingadmissionpolicies",
        },
        kind: { group: "admissionregistration.k8s.io", version: "v1", kind: "ValidatingAdmissionPolicy" },
      }),
    );
  });
});

describe("ValidatingAdmissionPolicy: params", () => {
  const limits = (
    ns: string,
    name: string,
    max: string,
    labels: Record<string, string> = {},
  ): KubeObject => ({
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name, namespace: ns, labels },
    data: { maxReplicas: max },
  });
  const withParams = policy("p", {
    paramKind: { apiVersion: "v1", kind: "ConfigMap" },
    validations: [
      {
        expression: "object.spec.replicas <= int(params.data.maxReplicas)",
        messageExpression: "'at most ' + params.data.maxReplicas + ' (' + params.metadata.name + ')'",
      },
    ],
  });

  it("reads the param by name in the request's namespace", async () => {
    const p = plugin(
      [[withParams, [binding("b", "p", { paramRef: { name: "limits", parameterNotFoundAction: "Deny" } })]]],
      [limits("default", "limits", "4")],
    );
    await p.validate(attrs({ object: deployment(4) }));
    expect((await refusal(p.validate(attrs({ object: deployment(5) })))).message).toMatch(
      /at most 4 \(limits\)$/,
    );
  });

  it("evaluates once per param a selector finds", async () => {
    const p = plugin(
      [
        [
          withParams,
          [
            binding("b", "p", {
              paramRef: { selector: { matchLabels: { kind: "limit" } }, parameterNotFoundAction: "Deny" },
            }),
          ],
        ],
      ],
      [
        limits("default", "loose", "10", { kind: "limit" }),
        limits("default", "tight", "2", { kind: "limit" }),
        limits("default", "other", "1"),
      ],
    );
    expect((await refusal(p.validate(attrs({ object: deployment(3) })))).message).toMatch(
      /at most 2 \(tight\)$/,
    );
  });

  it("a missing param: Deny is a configuration error, Allow judges nothing", async () => {
    const p = (action: "Deny" | "Allow") =>
      plugin(
        [[withParams, [binding("b", "p", { paramRef: { name: "nope", parameterNotFoundAction: action } })]]],
        [],
      );
    expect((await refusal(p("Deny").validate(attrs()))).message).toBe(
      `deployments.apps "web" is forbidden: ValidatingAdmissionPolicy 'p' with binding 'b' denied request: failed to configure binding: no params found for policy binding with \`Deny\` parameterNotFoundAction`,
    );
    await p("Allow").validate(attrs());
  });

  it("a paramKind the server does not serve is a configuration error", async () => {
    const unknown = policy("p", {
      paramKind: { apiVersion: "example.com/v1", kind: "Limit" },
      validations: [{ expression: "true" }],
    });
    const err = await refusal(
      plugin([
        [unknown, [binding("b", "p", { paramRef: { name: "x", parameterNotFoundAction: "Deny" } })]],
      ]).validate(attrs()),
    );
    expect(err.message).toMatch(
      /failed to configure binding: paramKind kind `&ParamKind\{APIVersion:example.com\/v1,Kind:Limit,\}` not known$/,
    );
  });
});
