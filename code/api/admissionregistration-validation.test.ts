import { describe, expect, it } from "vitest";
import { setDefaultsMutatingWebhookConfiguration } from "./admissionregistration.ts";
import {
  validateMutatingWebhookConfiguration,
  validateMutatingWebhookConfigurationUpdate,
} from "./admissionregistration-validation.ts";
import { fieldErrorToString } from "./field-errors.ts";
import type { KubeObject } from "./meta.ts";

const config = (hook: Record<string, unknown>): KubeObject => {
  const c: KubeObject = {
    apiVersion: "admissionregistration.k8s.io/v1",
    kind: "MutatingWebhookConfiguration",
    metadata: { name: "c", resourceVersion: "1" },
    webhooks: [
      {
        name: "w.example.com",
        clientConfig: { url: "https://hook.example.com/mutate" },
        rules: [{ operations: ["CREATE"], apiGroups: [""], apiVersions: ["v1"], resources: ["pods"] }],
        sideEffects: "None",
        admissionReviewVersions: ["v1"],
        ...hook,
      },
    ],
  };
  setDefaultsMutatingWebhookConfiguration(c);
  return c;
};
const errors = (c: KubeObject) => validateMutatingWebhookConfiguration(c).map(fieldErrorToString);

describe("webhook configuration validation", () => {
  it("accepts a defaulted minimal webhook", () => {
    expect(errors(config({}))).toEqual([]);
  });

  it("refuses overlapping resource wildcards and mixed operation wildcards, in upstream's words", () => {
    const c = config({
      rules: [
        {
          operations: ["*", "CREATE"],
          apiGroups: [""],
          apiVersions: ["v1"],
          resources: ["*", "pods", "pods/*", "pods/log"],
        },
      ],
    });
    expect(errors(c)).toEqual([
      'webhooks[0].rules[0].operations: Invalid value: []string{"*", "CREATE"}: if \'*\' is present, must not specify other operations',
      "webhooks[0].rules[0].resources[3]: Invalid value: \"pods/log\": if 'pods/*' is present, must not specify pods/log",
      'webhooks[0].rules[0].resources: Invalid value: []string{"*", "pods", "pods/*", "pods/log"}: if \'*\' is present, must not specify other resources without subresources',
    ]);
  });

  it("checks admissionReviewVersions, the service reference and the reinvocation policy", () => {
    const c = config({
      clientConfig: { service: { namespace: "default", name: "hook", path: "/Mutate", port: 70000 } },
      admissionReviewVersions: ["v2"],
      reinvocationPolicy: "Always",
    });
    expect(errors(c)).toEqual([
      'webhooks[0].reinvocationPolicy: Unsupported value: "Always": supported values: "IfNeeded", "Never"',
      "webhooks[0].clientConfig.service.port: Invalid value: 70000: port is not valid: must be between 1 and 65535, inclusive",
      expect.stringMatching(
        /^webhooks\[0\]\.clientConfig\.service\.path: Invalid value: "\/Mutate": segment\[0\]: a lowercase RFC 1123 subdomain/,
      ),
      'webhooks[0].admissionReviewVersions: Invalid value: []string{"v2"}: must include at least one of v1, v1beta1',
    ]);
  });

  it("lets an update keep side effects an older server stored, but not add them", () => {
    const old = config({ sideEffects: "Some" });
    expect(validateMutatingWebhookConfigurationUpdate(config({ sideEffects: "Some" }), old)).toEqual([]);
    const fresh = config({});
    expect(
      validateMutatingWebhookConfigurationUpdate(config({ sideEffects: "Some" }), fresh).map(
        fieldErrorToString,
      ),
    ).toEqual([
      'webhooks[0].sideEffects: Unsupported value: "Some": supported values: "None", "NoneOnDryRun"',
    ]);
  });
});
