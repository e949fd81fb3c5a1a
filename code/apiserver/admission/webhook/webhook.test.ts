import { networkInterfaces } from "node:os";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type APIServer, startAPIServer } from "../../server.ts";
import {
  caBundleOf,
  newWebhookCerts,
  type Review,
  reviewResponse,
  startWebhookServer,
  type WebhookCerts,
  type WebhookServer,
} from "../../testing/webhook-server.ts";

/**
 * The webhook plugins through the real API server (insecure port, default admission chain) and a
 * real HTTPS webhook server whose certificate a test CA signed.
 */
let api: APIServer;
let certs: WebhookCerts;
let hooks: WebhookServer;
/** The handler per path; tests set what they need. */
const handlers = new Map<string, (review: Review) => unknown | Promise<unknown>>();
const group = "/apis/admissionregistration.k8s.io/v1";
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function send(method: string, path: string, body?: unknown) {
  const r = await fetch(`${api.url}${path}`, {
    method,
    headers: body ? { "Content-Type": "application/json" } : {},
    body: body ? JSON.stringify(body) : undefined,
  });
  // biome-ignore lint/suspicious/noExplicitAny: test reads of JSON answers
  return { code: r.status, body: (await r.json()) as any, warnings: r.headers.get("warning") };
}

const pod = (name: string, labels?: Record<string, string>) => ({
  apiVersion: "v1",
  kind: "Pod",
  metadata: labels ? { name, labels } : { name },
  spec: { containers: [{ name: "app", image: "nginx" }] },
});

/** A ConfigMap only the probe webhook of configuration `name` looks at. */
const probe = (name: string) => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { generateName: "probe-", labels: { probe: name } },
});

function probeHook(name: string) {
  return {
    name: `probe.${name}.example.com`,
    clientConfig: { url: `${hooks.url}/allow`, caBundle: caBundleOf(certs) },
    rules: [{ operations: ["CREATE"], apiGroups: [""], apiVersions: ["v1"], resources: ["configmaps"] }],
    objectSelector: { matchLabels: { probe: name } },
    sideEffects: "None",
    admissionReviewVersions: ["v1"],
  };
}

/** Is configuration `name` in effect? Its probe webhook sees a dry-run ConfigMap create. */
async function probed(name: string): Promise<boolean> {
  const before = hooks.received.length;
  await send("POST", "/api/v1/namespaces/default/configmaps?dryRun=All", probe(name));
  return hooks.received.slice(before).some((r) => r.review.request.object?.metadata?.labels?.probe === name);
}

const registered: { resource: string; name: string }[] = [];

/** Creates a configuration (plus its probe webhook) and waits until the plugins have it. */
async function register(kind: "Mutating" | "Validating", name: string, webhooks: object[]) {
  const resource = `${kind.toLowerCase()}webhookconfigurations`;
  const r = await send("POST", `${group}/${resource}`, {
    apiVersion: "admissionregistration.k8s.io/v1",
    kind: `${kind}WebhookConfiguration`,
    metadata: { name },
    webhooks: [...webhooks, probeHook(name)],
  });
  expect(r.code, JSON.stringify(r.body)).toBe(201);
  registered.push({ resource, name });
  for (let i = 0; i < 200 && !(await probed(name)); i++) await sleep(10);
}

/** Deletes a configuration and waits until the plugins have dropped it. */
async function unregister(name: string) {
  const i = registered.findIndex((r) => r.name === name);
  const [{ resource }] = registered.splice(i, 1);
  await send("DELETE", `${group}/${resource}/${name}`);
  for (let n = 0; n < 200 && (await probed(name)); n++) await sleep(10);
}

/** A webhook at `path` on the test server for CREATE of pods. */
function hook(name: string, path: string, extra: Record<string, unknown> = {}) {
  return {
    name,
    clientConfig: { url: `${hooks.url}${path}`, caBundle: caBundleOf(certs) },
    rules: [{ operations: ["CREATE"], apiGroups: [""], apiVersions: ["v1"], resources: ["pods"] }],
    sideEffects: "None",
    admissionReviewVersions: ["v1"],
    ...extra,
  };
}

/** A free port nobody listens on: listen, note the port, close. */
async function deadURL(): Promise<string> {
  const s = await startWebhookServer(certs, () => ({}));
  await s.close();
  return s.url;
}

beforeAll(async () => {
  certs = await newWebhookCerts(["webhook.default.svc"]);
  hooks = await startWebhookServer(certs, async (review, path) => {
    const h = handlers.get(path);
    if (h) return h(review);
    if (path === "/allow") return reviewResponse(review);
    return { httpStatus: 404, body: "no handler" };
  });
  api = await startAPIServer({ insecurePort: 0, admission: {} });
});

afterAll(async () => {
  await api?.close();
  await hooks?.close();
});

afterEach(async () => {
  handlers.clear();
  while (registered.length > 0) await unregister(registered[0]!.name);
});

describe("serving the configurations", () => {
  it("defaults a webhook as upstream's v1 defaults, prints NAME WEBHOOKS AGE, bumps generation on change", async () => {
    const r = await send("POST", `${group}/mutatingwebhookconfigurations`, {
      apiVersion: "admissionregistration.k8s.io/v1",
      kind: "MutatingWebhookConfiguration",
      metadata: { name: "defaults" },
      // Rules on a resource no other test creates: this configuration has no probe webhook, so
      // afterEach cannot wait for the plugin to drop it, and a pod webhook left in effect for a
      // moment would answer the next test's pod create (with this test's timeoutSeconds: 5).
      webhooks: [
        hook("d.example.com", "/allow", {
          rules: [
            {
              operations: ["CREATE"],
              apiGroups: [""],
              apiVersions: ["v1"],
              resources: ["replicationcontrollers"],
            },
          ],
        }),
      ],
    });
    registered.push({ resource: "mutatingwebhookconfigurations", name: "defaults" });
    expect(r.code).toBe(201);
    const w = r.body.webhooks[0];
    expect([
      w.failurePolicy,
      w.matchPolicy,
      w.timeoutSeconds,
      w.reinvocationPolicy,
      w.rules[0].scope,
    ]).toEqual(["Fail", "Equivalent", 10, "Never", "*"]);
    expect([w.namespaceSelector, w.objectSelector, r.body.metadata.generation]).toEqual([{}, {}, 1]);
    const table = await fetch(`${api.url}${group}/mutatingwebhookconfigurations`, {
      headers: { Accept: "application/json;as=Table;v=v1;g=meta.k8s.io" },
    }).then((x) => x.json());
    expect(table.columnDefinitions.map((c: { name: string }) => c.name)).toEqual(["Name", "Webhooks", "Age"]);
    expect(table.rows[0].cells.slice(0, 2)).toEqual(["defaults", 1]);
    const relabel = await send("PUT", `${group}/mutatingwebhookconfigurations/defaults`, {
      ...r.body,
      metadata: { ...r.body.metadata, labels: { a: "b" } },
    });
    expect(relabel.body.metadata.generation).toBe(1);
    const changed = await send("PUT", `${group}/mutatingwebhookconfigurations/defaults`, {
      ...relabel.body,
      webhooks: [{ ...relabel.body.webhooks[0], timeoutSeconds: 5 }],
    });
    expect(changed.body.metadata.generation).toBe(2);
  });

  it("refuses what v1 validation refuses: side effects, bad timeout, http, both url and service", async () => {
    const r = await send("POST", `${group}/validatingwebhookconfigurations`, {
      apiVersion: "admissionregistration.k8s.io/v1",
      kind: "ValidatingWebhookConfiguration",
      metadata: { name: "bad" },
      webhooks: [
        { ...hook("some.example.com", "/allow"), sideEffects: "Some", timeoutSeconds: 31 },
        { ...hook("plain.example.com", "/allow"), clientConfig: { url: "http://127.0.0.1/x" } },
        {
          ...hook("two", "/allow"),
          clientConfig: { url: "https://a/", service: { namespace: "d", name: "s" } },
        },
      ],
    });
    expect(r.code).toBe(422);
    expect(
      r.body.details.causes.map((c: { field: string; message: string }) => `${c.field}: ${c.message}`),
    ).toEqual([
      'webhooks[0].sideEffects: Unsupported value: "Some": supported values: "None", "NoneOnDryRun"',
      "webhooks[0].timeoutSeconds: Invalid value: 31: the timeout value must be between 1 and 30 seconds",
      "webhooks[1].clientConfig.url: Invalid value: \"http\": 'https' is the only allowed URL scheme; desired format: https://host[/path]",
      'webhooks[2].name: Invalid value: "two": should be a domain with at least three segments separated by dots',
      "webhooks[2].clientConfig: Required value: exactly one of url or service is required",
    ]);
  });
});

describe("calling webhooks", () => {
  it("sends an AdmissionReview v1 with the request's facts, and allows", async () => {
    await register("Validating", "allow", [hook("allow.example.com", "/allow")]);
    const before = hooks.received.length;
    expect((await send("POST", "/api/v1/namespaces/default/pods", pod("reviewed"))).code).toBe(201);
    const got = hooks.received.slice(before).find((r) => r.path === "/allow")!;
    expect(got.timeout).toBe("10s");
    const req = got.review.request;
    expect(got.review.apiVersion).toBe("admission.k8s.io/v1");
    expect(req).toMatchObject({
      kind: { group: "", version: "v1", kind: "Pod" },
      resource: { group: "", version: "v1", resource: "pods" },
      requestKind: { group: "", version: "v1", kind: "Pod" },
      requestResource: { group: "", version: "v1", resource: "pods" },
      name: "reviewed",
      namespace: "default",
      operation: "CREATE",
      userInfo: { username: "system:unsecured", groups: ["system:masters", "system:authenticated"] },
      oldObject: null,
      dryRun: false,
      options: { kind: "CreateOptions", apiVersion: "meta.k8s.io/v1" },
    });
    expect(req.uid).toMatch(/^[0-9a-f-]{36}$/);
    expect(req.object.metadata.name).toBe("reviewed");
    await send("DELETE", "/api/v1/namespaces/default/pods/reviewed");
  });

  it("returns a denial's status to the client, prefixed with the webhook's name", async () => {
    handlers.set("/deny", (review) =>
      reviewResponse(review, { allowed: false, status: { code: 403, message: "pods need an owner label" } }),
    );
    handlers.set("/deny-bare", (review) => reviewResponse(review, { allowed: false }));
    await register("Validating", "deny", [hook("deny.example.com", "/deny")]);
    const r = await send("POST", "/api/v1/namespaces/default/pods", pod("denied"));
    expect([r.code, r.body.message]).toEqual([
      403,
      'admission webhook "deny.example.com" denied the request: pods need an owner label',
    ]);
    expect((await send("GET", "/api/v1/namespaces/default/pods/denied")).code).toBe(404);
  });

  it("applies a JSON patch: a label (creating the map) and a sidecar, defaulted, in the stored object", async () => {
    handlers.set("/inject", (review) =>
      reviewResponse(review, {
        patch: [
          { op: "add", path: "/metadata/labels", value: { injected: "true" } },
          { op: "add", path: "/spec/containers/-", value: { name: "sidecar", image: "envoy" } },
        ],
      }),
    );
    await register("Mutating", "inject", [hook("inject.example.com", "/inject")]);
    const r = await send("POST", "/api/v1/namespaces/default/pods", pod("patched"));
    expect(r.code).toBe(201);
    const stored = (await send("GET", "/api/v1/namespaces/default/pods/patched")).body;
    expect(stored.metadata.labels).toEqual({ injected: "true" });
    expect(stored.spec.containers.map((c: { name: string }) => c.name)).toEqual(["app", "sidecar"]);
    // The patched object was defaulted again: the sidecar has what every container gets.
    expect(stored.spec.containers[1]).toMatchObject({
      imagePullPolicy: "Always",
      terminationMessagePath: "/dev/termination-log",
    });
    await send("DELETE", "/api/v1/namespaces/default/pods/patched");
  });

  // Endpoints may not be loopback addresses (upstream's validation): the service test needs
  // the machine's own non-loopback IPv4 address, and is skipped (visibly) without one.
  const hostIP = Object.values(networkInterfaces())
    .flat()
    .find((i) => i && i.family === "IPv4" && !i.internal)?.address;
  it.skipIf(!hostIP)(
    "reaches a webhook by service reference through the service's endpoints, verified for <svc>.<ns>.svc",
    async () => {
      const onHost = await startWebhookServer(
        certs,
        (review) =>
          reviewResponse(review, {
            patch: [{ op: "add", path: "/metadata/labels", value: { via: "service" } }],
          }),
        hostIP,
      );
      try {
        await send("POST", "/api/v1/namespaces/default/services", {
          apiVersion: "v1",
          kind: "Service",
          metadata: { name: "webhook" },
          spec: { ports: [{ name: "https", port: 443, targetPort: onHost.port }] },
        });
        const ep = await send("POST", "/api/v1/namespaces/default/endpoints", {
          apiVersion: "v1",
          kind: "Endpoints",
          metadata: { name: "webhook" },
          subsets: [{ addresses: [{ ip: hostIP }], ports: [{ name: "https", port: onHost.port }] }],
        });
        expect(ep.code, ep.body.message).toBe(201);
        await register("Mutating", "by-service", [
          {
            ...hook("svc.example.com", "/svc"),
            clientConfig: {
              service: { namespace: "default", name: "webhook", path: "/svc" },
              caBundle: caBundleOf(certs),
            },
          },
        ]);
        const created = await send("POST", "/api/v1/namespaces/default/pods", pod("via-svc"));
        expect(created.code, created.body.message).toBe(201);
        expect((await send("GET", "/api/v1/namespaces/default/pods/via-svc")).body.metadata.labels).toEqual({
          via: "service",
        });
        expect(onHost.received.map((r) => r.path)).toContain("/svc");
      } finally {
        await onHost.close();
        await send("DELETE", "/api/v1/namespaces/default/pods/via-svc");
        await send("DELETE", "/api/v1/namespaces/default/endpoints/webhook");
        await send("DELETE", "/api/v1/namespaces/default/services/webhook");
      }
    },
  );
});

describe("failure policy and timeouts", () => {
  it("Fail refuses when the webhook is unreachable, erroring or untrusted; Ignore lets the request through", async () => {
    const dead = await deadURL();
    const port = new URL(dead).port;
    handlers.set("/error", () => ({ httpStatus: 500, body: "boom" }));
    const other = await newWebhookCerts();
    await register("Validating", "failing", [
      { ...hook("down.example.com", "/"), clientConfig: { url: `${dead}/`, caBundle: caBundleOf(certs) } },
    ]);
    const down = await send("POST", "/api/v1/namespaces/default/pods", pod("f1"));
    expect([down.code, down.body.reason, down.body.message]).toEqual([
      500,
      "InternalError",
      `Internal error occurred: failed calling webhook "down.example.com": failed to call webhook: Post "https://127.0.0.1:${port}/?timeout=10s": dial tcp 127.0.0.1:${port}: connect: connection refused`,
    ]);
    await unregister("failing");

    await register("Validating", "failing2", [hook("error.example.com", "/error")]);
    const erroring = await send("POST", "/api/v1/namespaces/default/pods", pod("f2"));
    expect(erroring.code).toBe(500);
    expect(erroring.body.message).toContain(
      'failed calling webhook "error.example.com": failed to call webhook',
    );
    expect(erroring.body.message).toContain("boom");
    await unregister("failing2");

    await register("Validating", "untrusted", [
      {
        ...hook("untrusted.example.com", "/allow"),
        clientConfig: { url: `${hooks.url}/allow`, caBundle: caBundleOf(other) },
      },
    ]);
    const untrusted = await send("POST", "/api/v1/namespaces/default/pods", pod("f3"));
    expect(untrusted.body.message).toContain("x509: certificate signed by unknown authority");
    await unregister("untrusted");

    await register("Validating", "ignoring", [
      { ...hook("down.example.com", "/"), clientConfig: { url: `${dead}/` }, failurePolicy: "Ignore" },
      { ...hook("error.example.com", "/error"), failurePolicy: "Ignore" },
    ]);
    expect((await send("POST", "/api/v1/namespaces/default/pods", pod("f4"))).code).toBe(201);
    for (const name of ["f1", "f2", "f3"])
      expect((await send("GET", `/api/v1/namespaces/default/pods/${name}`)).code).toBe(404);
    await send("DELETE", "/api/v1/namespaces/default/pods/f4");
  });

  it("gives up on a webhook after timeoutSeconds: Fail is an error, Ignore is allowed", async () => {
    handlers.set("/sleep", async (review) => {
      await sleep(3000);
      return reviewResponse(review);
    });
    await register("Mutating", "slow", [
      {
        ...hook("slow-fail.example.com", "/sleep"),
        timeoutSeconds: 1,
        objectSelector: { matchLabels: { policy: "fail" } },
      },
      {
        ...hook("slow-ignore.example.com", "/sleep"),
        timeoutSeconds: 1,
        failurePolicy: "Ignore",
        objectSelector: { matchLabels: { policy: "ignore" } },
      },
    ]);
    const failed = await send("POST", "/api/v1/namespaces/default/pods", pod("t1", { policy: "fail" }));
    expect(failed.code).toBe(500);
    expect(failed.body.message).toMatch(
      /^Internal error occurred: failed calling webhook "slow-fail.example.com": failed to call webhook: Post "https:\/\/127\.0\.0\.1:\d+\/sleep\?timeout=1s": context deadline exceeded$/,
    );
    expect(hooks.received.at(-1)?.timeout).toBe("1s");
    expect(
      (await send("POST", "/api/v1/namespaces/default/pods", pod("t2", { policy: "ignore" }))).code,
    ).toBe(201);
    await send("DELETE", "/api/v1/namespaces/default/pods/t2");
  });
});

describe("selectors, dry run and reinvocation", () => {
  it("skips namespaces and objects the selectors do not select", async () => {
    handlers.set("/mark", (review) =>
      reviewResponse(review, {
        patch: [{ op: "add", path: "/metadata/annotations", value: { marked: "yes" } }],
      }),
    );
    for (const [name, labels] of [
      ["hooked", { webhooks: "on" }],
      ["plain", {}],
    ] as const) {
      await send("POST", "/api/v1/namespaces", {
        apiVersion: "v1",
        kind: "Namespace",
        metadata: { name, labels },
      });
    }
    await register("Mutating", "selective", [
      { ...hook("ns.example.com", "/mark"), namespaceSelector: { matchLabels: { webhooks: "on" } } },
      {
        ...hook("obj.example.com", "/mark"),
        objectSelector: { matchExpressions: [{ key: "inject", operator: "In", values: ["yes"] }] },
      },
    ]);
    const marked = async (ns: string, name: string, labels?: Record<string, string>) => {
      expect((await send("POST", `/api/v1/namespaces/${ns}/pods`, pod(name, labels))).code).toBe(201);
      const got = (await send("GET", `/api/v1/namespaces/${ns}/pods/${name}`)).body;
      await send("DELETE", `/api/v1/namespaces/${ns}/pods/${name}`);
      return got.metadata.annotations?.marked === "yes";
    };
    expect(await marked("hooked", "a")).toBe(true);
    expect(await marked("plain", "b")).toBe(false);
    expect(await marked("default", "c")).toBe(false);
    expect(await marked("default", "d", { inject: "yes" })).toBe(true);
  });

  it("refuses a dry run to a webhook with side effects, and tells a NoneOnDryRun webhook it is one", async () => {
    await register("Validating", "dry", [hook("dry.example.com", "/allow", { sideEffects: "NoneOnDryRun" })]);
    const before = hooks.received.length;
    expect((await send("POST", "/api/v1/namespaces/default/pods?dryRun=All", pod("dry"))).code).toBe(201);
    const got = hooks.received.slice(before).find((r) => r.review.request.name === "dry")!;
    expect([got.review.request.dryRun, got.review.request.options.dryRun]).toEqual([true, ["All"]]);
    expect((await send("GET", "/api/v1/namespaces/default/pods/dry")).code).toBe(404);
    // v1 refuses to store sideEffects Some or Unknown (see "refuses what v1 validation refuses");
    // the dispatcher's own check is in dispatch.test.ts.
  });

  it("reinvokes an IfNeeded webhook once when a later webhook changed the object", async () => {
    // a-first runs first (configurations sort by name) and records whether it saw b's label.
    handlers.set("/a", (review) => {
      const labels = review.request.object.metadata.labels ?? {};
      const saw = labels.b === "added" ? "yes" : "no";
      if (labels["a-saw-b"] === saw) return reviewResponse(review);
      const op = labels["a-saw-b"] === undefined ? "add" : "replace";
      return reviewResponse(review, { patch: [{ op, path: "/metadata/labels/a-saw-b", value: saw }] });
    });
    handlers.set("/b", (review) => {
      if (review.request.object.metadata.labels?.b) return reviewResponse(review);
      return reviewResponse(review, { patch: [{ op: "add", path: "/metadata/labels/b", value: "added" }] });
    });
    for (const policy of ["IfNeeded", "Never"]) {
      await register("Mutating", "a-first", [hook("a.example.com", "/a", { reinvocationPolicy: policy })]);
      await register("Mutating", "b-second", [hook("b.example.com", "/b")]);
      const before = hooks.received.length;
      const name = `re-${policy.toLowerCase()}`;
      expect((await send("POST", "/api/v1/namespaces/default/pods", pod(name, { app: "x" }))).code).toBe(201);
      const stored = (await send("GET", `/api/v1/namespaces/default/pods/${name}`)).body;
      const calls = hooks.received
        .slice(before)
        .filter((r) => r.path === "/a" && r.review.request.name === name);
      if (policy === "IfNeeded") {
        expect([stored.metadata.labels, calls.length]).toEqual([
          { app: "x", b: "added", "a-saw-b": "yes" },
          2,
        ]);
      } else {
        expect([stored.metadata.labels, calls.length]).toEqual([
          { app: "x", b: "added", "a-saw-b": "no" },
          1,
        ]);
      }
      await send("DELETE", `/api/v1/namespaces/default/pods/${name}`);
      await unregister("a-first");
      await unregister("b-second");
    }
  });
});
