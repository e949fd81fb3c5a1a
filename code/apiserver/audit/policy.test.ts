import { describe, expect, it } from "vitest";
import type { Attributes } from "../authz/authorizer.ts";
import { evaluatePolicy, loadPolicy, type Policy } from "./policy.ts";

const jane = { name: "jane", groups: ["dev", "system:authenticated"] };

function attrs(over: Partial<Attributes>): Attributes {
  return {
    user: jane,
    verb: "get",
    isResourceRequest: true,
    path: "/api/v1/namespaces/default/pods/web",
    namespace: "default",
    apiGroup: "",
    apiVersion: "v1",
    resource: "pods",
    subresource: "",
    name: "web",
    ...over,
  };
}

const policy = loadPolicy(`
apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
  - level: None
    users: ["system:kube-proxy"]
  - level: None
    nonResourceURLs: ["/healthz*", "/version"]
  - level: RequestResponse
    resources:
      - group: ""
        resources: ["pods/log", "*/scale"]
  - level: Metadata
    resources:
      - group: ""
        resources: ["secrets"]
        resourceNames: ["token"]
  - level: Request
    verbs: ["create", "update", "patch"]
    namespaces: ["default", ""]
    omitStages: [ResponseStarted]
    omitManagedFields: true
  - level: Request
    userGroups: ["ops"]
    resources:
      - group: apps
        resources: ["deployments/*"]
  - level: Metadata
`);

describe("audit policy: the first matching rule wins", () => {
  it.each([
    ["a user named by a None rule", attrs({ user: { name: "system:kube-proxy", groups: [] } }), "None"],
    [
      "a non-resource URL by prefix",
      attrs({ isResourceRequest: false, path: "/healthz/ready", verb: "get" }),
      "None",
    ],
    ["an exact non-resource URL", attrs({ isResourceRequest: false, path: "/version" }), "None"],
    ["/versions is not /version", attrs({ isResourceRequest: false, path: "/versions" }), "Metadata"],
    ["resource/subresource", attrs({ subresource: "log" }), "RequestResponse"],
    ["*/subresource", attrs({ resource: "replicationcontrollers", subresource: "scale" }), "RequestResponse"],
    ["resourceNames: the named secret", attrs({ resource: "secrets", name: "token" }), "Metadata"],
    ["verbs and namespaces", attrs({ verb: "create", name: "" }), "Request"],
    [
      "'' is a cluster-scoped resource",
      attrs({ verb: "create", namespace: "", resource: "nodes" }),
      "Request",
    ],
    ["another namespace falls through", attrs({ verb: "create", namespace: "prod" }), "Metadata"],
    [
      "resource/* needs a subresource rule's group and the user's group",
      attrs({
        user: { name: "bob", groups: ["ops"] },
        apiGroup: "apps",
        resource: "deployments",
        subresource: "status",
        namespace: "prod",
      }),
      "Request",
    ],
    [
      "resource/* and another user",
      attrs({ apiGroup: "apps", resource: "deployments", subresource: "status", namespace: "prod" }),
      "Metadata",
    ],
  ])("%s", (_name, a, level) => {
    expect(evaluatePolicy(policy, a).level).toBe(level);
  });

  it("a rule of resources never matches a non-resource request, nor the reverse", () => {
    const p: Policy = {
      rules: [
        { level: "Request", namespaces: ["default"] },
        { level: "Metadata", nonResourceURLs: ["*"] },
      ],
    };
    expect(
      evaluatePolicy(p, attrs({ isResourceRequest: false, path: "/apis", namespace: "default" })).level,
    ).toBe("Metadata");
    expect(evaluatePolicy(p, attrs({ namespace: "other" })).level).toBe("None");
  });

  it("omitStages add up; the rule's omitManagedFields wins", () => {
    expect(evaluatePolicy(policy, attrs({ verb: "patch" }))).toEqual({
      level: "Request",
      omitStages: ["RequestReceived", "ResponseStarted"],
      omitManagedFields: true,
    });
    expect(evaluatePolicy(policy, attrs({ verb: "list" }))).toEqual({
      level: "Metadata",
      omitStages: ["RequestReceived"],
      omitManagedFields: false,
    });
  });

  it("no rule matches: None", () => {
    expect(evaluatePolicy({ rules: [{ level: "Metadata", verbs: ["delete"] }] }, attrs({})).level).toBe(
      "None",
    );
  });
});

describe("loading a policy", () => {
  it("refuses another kind, an unknown level or stage, and no rules", () => {
    expect(() => loadPolicy("apiVersion: v1\nkind: ConfigMap\n")).toThrow(
      'failed decoding: no kind "ConfigMap" is registered for version "v1"',
    );
    expect(() =>
      loadPolicy(
        "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Everything\n  omitStages: [Done]\n",
      ),
    ).toThrow(
      'invalid audit policy: rules[0].level: Invalid value: "Everything": allowed levels are None,Metadata,Request,RequestResponse, rules[0].omitStages[0]: Invalid value: "Done": allowed stages are RequestReceived,ResponseStarted,ResponseComplete,Panic',
    );
    expect(() => loadPolicy("apiVersion: audit.k8s.io/v1\nkind: Policy\nrules: []\n", "file p.yaml")).toThrow(
      "loaded illegal policy with 0 rules from file p.yaml",
    );
  });
});
