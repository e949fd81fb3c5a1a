import { describe, expect, it } from "vitest";
import type { MutatingWebhook, RuleWithOperations } from "../../../api/admissionregistration.ts";
import { isStatusError } from "../../errors.ts";
import type { Attributes } from "../interfaces.ts";
import { verifyAdmissionResponse } from "./admissionreview.ts";
import { toStatusErr } from "./errors.ts";
import type { WebhookDeps } from "./generic.ts";
import { MutatingAdmissionWebhook } from "./mutating.ts";
import { ruleMatches } from "./rules.ts";
import type { HookSource } from "./source.ts";
import { ValidatingAdmissionWebhook } from "./validating.ts";

const attrs = (over: Partial<Attributes> = {}): Attributes => ({
  name: "web",
  namespace: "default",
  resource: { group: "", version: "v1", resource: "pods" },
  subresource: "",
  kind: { group: "", version: "v1", kind: "Pod" },
  operation: "CREATE",
  dryRun: false,
  object: { apiVersion: "v1", kind: "Pod", metadata: { name: "web" } },
  userInfo: { name: "jane", groups: [] },
  warnings: [],
  annotations: {},
  ...over,
});

const staticSource = (hooks: MutatingWebhook[]): HookSource => ({
  ready: Promise.resolve(),
  webhooks: () => hooks.map((hook, i) => ({ uid: `c/${hook.name}/${i}`, configurationName: "c", hook })),
  stop: () => {},
});

const noDeps: WebhookDeps = {
  getNamespace: async () => ({ apiVersion: "v1", kind: "Namespace", metadata: { name: "default" } }),
  getService: async () => {
    throw new Error("no services here");
  },
  getEndpoints: async () => {
    throw new Error("no endpoints here");
  },
};

const podHook = (name: string, over: Partial<MutatingWebhook> = {}): MutatingWebhook => ({
  name,
  // Never reached: every case below is decided before a connection is made.
  clientConfig: { url: "https://127.0.0.1:1/" },
  rules: [{ operations: ["CREATE"], apiGroups: [""], apiVersions: ["v1"], resources: ["pods"], scope: "*" }],
  failurePolicy: "Fail",
  namespaceSelector: {},
  objectSelector: {},
  timeoutSeconds: 1,
  admissionReviewVersions: ["v1"],
  ...over,
});

async function refusal(p: Promise<void>) {
  try {
    await p;
  } catch (e) {
    if (isStatusError(e)) return [e.code, e.status.message];
    throw e;
  }
  return "allowed";
}

describe("dry run and side effects (configurations stored before v1 made None required)", () => {
  it("refuses a dry run to Some and Unknown with a 400, whatever the failure policy", async () => {
    for (const sideEffects of ["Some", "Unknown"] as const) {
      const hooks = [podHook("fx.example.com", { sideEffects, failurePolicy: "Ignore" })];
      const v = new ValidatingAdmissionWebhook(staticSource(hooks), noDeps);
      expect(await refusal(v.validate(attrs({ dryRun: true })))).toEqual([
        400,
        'admission webhook "fx.example.com" does not support dry run',
      ]);
      const m = new MutatingAdmissionWebhook(staticSource(hooks), noDeps);
      expect(await refusal(m.admit(attrs({ dryRun: true })))).toEqual([
        400,
        'admission webhook "fx.example.com" does not support dry run',
      ]);
    }
  });

  it("treats a missing sideEffects on a dry run as a failure to call (Fail refuses, Ignore allows)", async () => {
    const fail = new ValidatingAdmissionWebhook(staticSource([podHook("nil.example.com")]), noDeps);
    expect(await refusal(fail.validate(attrs({ dryRun: true })))).toEqual([
      500,
      'Internal error occurred: failed calling webhook "nil.example.com": Webhook SideEffects is nil',
    ]);
    const ignore = new ValidatingAdmissionWebhook(
      staticSource([podHook("nil.example.com", { failurePolicy: "Ignore" })]),
      noDeps,
    );
    expect(await refusal(ignore.validate(attrs({ dryRun: true })))).toBe("allowed");
  });

  it("never calls a webhook for its own configurations", async () => {
    const all = podHook("all.example.com", {
      sideEffects: "Some",
      rules: [{ operations: ["*"], apiGroups: ["*"], apiVersions: ["*"], resources: ["*"] }],
    });
    const v = new ValidatingAdmissionWebhook(staticSource([all]), noDeps);
    const config = attrs({
      dryRun: true,
      namespace: "",
      resource: {
        group: "admissionregistration.k8s.io",
        version: "v1",
        resource: "validatingwebhookconfigurations",
      },
      kind: { group: "admissionregistration.k8s.io", version: "v1", kind: "ValidatingWebhookConfiguration" },
    });
    expect(await refusal(v.validate(config))).toBe("allowed");
  });
});

describe("rules", () => {
  const rule = (resources: string[], scope: RuleWithOperations["scope"] = "*"): RuleWithOperations => ({
    operations: ["*"],
    apiGroups: ["*"],
    apiVersions: ["*"],
    resources,
    scope,
  });
  const req = (resource: string, subresource = "", namespace = "default") => ({
    operation: "UPDATE" as const,
    namespace,
    subresource,
    resource: { group: "", version: "v1", resource },
  });

  it("matches * without subresources, */* with them, pods/* (pods included) and */status", () => {
    expect(ruleMatches(rule(["*"]), req("pods"))).toBe(true);
    expect(ruleMatches(rule(["*"]), req("pods", "status"))).toBe(false);
    expect(ruleMatches(rule(["*/*"]), req("pods", "status"))).toBe(true);
    expect(ruleMatches(rule(["pods/*"]), req("pods", "binding"))).toBe(true);
    // Upstream's matcher compares "*" with the empty subresource too: pods/* covers pods itself.
    expect(ruleMatches(rule(["pods/*"]), req("pods"))).toBe(true);
    expect(ruleMatches(rule(["*/status"]), req("nodes", "status", ""))).toBe(true);
    expect(ruleMatches(rule(["pods"]), req("pods", "status"))).toBe(false);
  });

  it("scopes: a Namespace is cluster-scoped though it carries its own name as namespace", () => {
    expect(ruleMatches(rule(["*"], "Namespaced"), req("pods"))).toBe(true);
    expect(ruleMatches(rule(["*"], "Namespaced"), req("nodes", "", ""))).toBe(false);
    expect(ruleMatches(rule(["*"], "Cluster"), req("namespaces", "", "team-a"))).toBe(true);
    expect(ruleMatches(rule(["*"], "Namespaced"), req("namespaces", "", "team-a"))).toBe(false);
    expect(ruleMatches({ ...rule(["*"]), operations: ["CREATE"] }, req("pods"))).toBe(false);
  });
});

describe("answers", () => {
  const review = (response: Record<string, unknown>) => ({
    apiVersion: "admission.k8s.io/v1",
    kind: "AdmissionReview",
    response,
  });
  const fails = (uid: string, mutating: boolean, r: unknown) => {
    try {
      verifyAdmissionResponse(uid, mutating, r);
      return "ok";
    } catch (e) {
      return `${(e as Error).name}: ${(e as Error).message}`;
    }
  };

  it("checks the uid, the kind, and patch with patchType — with upstream's words", () => {
    expect(fails("u1", true, review({ uid: "u2", allowed: true }))).toBe(
      'InvalidResponseError: expected response.uid="u1", got "u2"',
    );
    expect(fails("u1", true, { response: { uid: "u1", allowed: true } })).toBe(
      "InvalidResponseError: expected webhook response of admission.k8s.io/v1, Kind=AdmissionReview, got , Kind=",
    );
    expect(fails("u1", true, review({ uid: "u1", allowed: true, patch: "W10=" }))).toBe(
      "InvalidResponseError: webhook returned response.patch but not response.patchType",
    );
    expect(fails("u1", false, review({ uid: "u1", allowed: true, patchType: "JSONPatch" }))).toBe(
      "InvalidResponseError: validating webhook may not return response.patchType",
    );
    expect(
      fails(
        "u1",
        true,
        review({ uid: "u1", allowed: true, patch: '[{"op":"add"}]', patchType: "JSONPatch" }),
      ),
    ).toBe("DecodeError: illegal base64 data at input byte 0");
    expect(fails("u1", true, review({ uid: "u1" }))).toBe("ok");
  });

  it("turns a denial into the client's Status: named, at least 400, explained if it can be", () => {
    expect(toStatusErr("x.example.com", { code: 200, message: "no" }).status).toMatchObject({
      code: 400,
      status: "Failure",
      message: 'admission webhook "x.example.com" denied the request: no',
    });
    expect(toStatusErr("x.example.com", { code: 409, reason: "Conflict" }).status.message).toBe(
      'admission webhook "x.example.com" denied the request: Conflict',
    );
    expect(toStatusErr("x.example.com", undefined).status.message).toBe(
      'admission webhook "x.example.com" denied the request without explanation',
    );
  });
});
