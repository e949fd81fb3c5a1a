import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type APIServer, startAPIServer } from "../../../code/apiserver/server.ts";
import {
  caBundleOf,
  newWebhookCerts,
  startWebhookServer,
  type WebhookServer,
} from "../../../code/apiserver/testing/webhook-server.ts";
import { type AdmissionReview, admit, INJECTED_LABEL, SIDECAR } from "./mutating-webhook.ts";

// Your admit() behind a real HTTPS server, called by the real API server's
// MutatingAdmissionWebhook plugin for every pod created in namespace "default".
let api: APIServer;
let hook: WebhookServer;

async function send(method: string, path: string, body?: unknown) {
  const r = await fetch(`${api.url}${path}`, {
    method,
    headers: body ? { "Content-Type": "application/json" } : {},
    body: body ? JSON.stringify(body) : undefined,
  });
  // biome-ignore lint/suspicious/noExplicitAny: test reads of JSON answers
  return { code: r.status, body: (await r.json()) as any };
}

beforeAll(async () => {
  const certs = await newWebhookCerts();
  hook = await startWebhookServer(certs, (review) => admit(review as AdmissionReview));
  api = await startAPIServer({ insecurePort: 0, admission: {} });
  const r = await send("POST", "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations", {
    apiVersion: "admissionregistration.k8s.io/v1",
    kind: "MutatingWebhookConfiguration",
    metadata: { name: "sidecar-injector" },
    webhooks: [
      {
        name: "sidecar.example.com",
        clientConfig: { url: `${hook.url}/mutate`, caBundle: caBundleOf(certs) },
        rules: [{ operations: ["CREATE"], apiGroups: [""], apiVersions: ["v1"], resources: ["pods"] }],
        namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "default" } },
        sideEffects: "None",
        admissionReviewVersions: ["v1"],
        timeoutSeconds: 5,
      },
    ],
  });
  expect(r.code).toBe(201);
  // The plugin learns of the configuration from its watch: wait until your webhook is called.
  for (let i = 0; i < 300 && hook.received.length === 0; i++) {
    await send("POST", "/api/v1/namespaces/default/pods?dryRun=All", {
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "probe" },
      spec: { containers: [{ name: "c", image: "nginx" }] },
    });
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  expect(hook.received.length, "the API server never called the webhook").toBeGreaterThan(0);
});

afterAll(async () => {
  await api?.close();
  await hook?.close();
});

/** Creates the pod through the API server and returns the pod as stored. */
async function createAndGet(pod: Record<string, unknown>) {
  const created = await send("POST", "/api/v1/namespaces/default/pods", pod);
  expect(created.code, `the API server refused the pod: ${created.body.message}`).toBe(201);
  const name = (pod.metadata as { name: string }).name;
  return (await send("GET", `/api/v1/namespaces/default/pods/${name}`)).body;
}

describe("your webhook, called by the API server", () => {
  it("labels a pod that has no labels at all, and adds the sidecar after its container", async () => {
    const stored = await createAndGet({
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "bare" },
      spec: { containers: [{ name: "app", image: "nginx" }] },
    });
    expect(stored.metadata.labels).toEqual({ [INJECTED_LABEL.key]: INJECTED_LABEL.value });
    expect(stored.spec.containers.map((c: { name: string; image: string }) => [c.name, c.image])).toEqual([
      ["app", "nginx"],
      [SIDECAR.name, SIDECAR.image],
    ]);
  });

  it("keeps the labels and containers a pod already has", async () => {
    const stored = await createAndGet({
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "web", labels: { app: "web", tier: "front" } },
      spec: {
        containers: [
          { name: "web", image: "nginx" },
          { name: "log", image: "busybox" },
        ],
      },
    });
    expect(stored.metadata.labels).toEqual({
      app: "web",
      tier: "front",
      [INJECTED_LABEL.key]: INJECTED_LABEL.value,
    });
    expect(stored.spec.containers.map((c: { name: string }) => c.name)).toEqual(["web", "log", SIDECAR.name]);
  });
});

describe("your AdmissionReview answer", () => {
  const review: AdmissionReview = {
    apiVersion: "admission.k8s.io/v1",
    kind: "AdmissionReview",
    request: {
      uid: "705ab4f5-6393-11e8-b7cc-42010a800002",
      operation: "CREATE",
      object: { metadata: { name: "p" }, spec: { containers: [{ name: "app", image: "nginx" }] } },
    },
  };

  it("answers this request (its uid), allows, and says what kind of patch it sends", () => {
    const answer = admit(structuredClone(review));
    expect([answer.apiVersion, answer.kind]).toEqual(["admission.k8s.io/v1", "AdmissionReview"]);
    expect(answer.response).toMatchObject({
      uid: review.request!.uid,
      allowed: true,
      patchType: "JSONPatch",
    });
  });

  it("sends the patch as base64 of a JSON list of operations", () => {
    const patch = admit(structuredClone(review)).response?.patch ?? "";
    expect(patch).toMatch(/^[A-Za-z0-9+/]+=*$/);
    expect(Array.isArray(JSON.parse(Buffer.from(patch, "base64").toString("utf8")))).toBe(true);
  });
});
