import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { describeWithTools } from "../../../../scripts/external-tools.ts";
import { type APIServer, startAPIServer } from "../../server.ts";
import { plainKubectlEnv, runKubectl } from "../../testing/kubectl-env.ts";
import {
  caBundleOf,
  newWebhookCerts,
  reviewResponse,
  startWebhookServer,
  type WebhookServer,
} from "../../testing/webhook-server.ts";

/** What kubectl shows of webhooks: their warnings, and a denial's message. */
describeWithTools("webhooks seen through kubectl", ["kubectl"], () => {
  let api: APIServer;
  let hooks: WebhookServer;
  let dir: string;
  let env: NodeJS.ProcessEnv;

  beforeAll(async () => {
    const certs = await newWebhookCerts();
    hooks = await startWebhookServer(certs, (review) => {
      const labels = review.request.object?.metadata?.labels ?? {};
      if (review.request.kind.kind === "ConfigMap") return reviewResponse(review);
      if (!labels.owner) {
        return reviewResponse(review, {
          allowed: false,
          status: { code: 403, reason: "Forbidden", message: "every pod needs an owner label" },
        });
      }
      return reviewResponse(review, {
        warnings: ["pods without resource limits will be refused from next week"],
      });
    });
    api = await startAPIServer({ insecurePort: 0, admission: {} });
    const created = await fetch(
      `${api.url}/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations`,
      {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({
          apiVersion: "admissionregistration.k8s.io/v1",
          kind: "ValidatingWebhookConfiguration",
          metadata: { name: "owner" },
          webhooks: [
            {
              name: "owner.example.com",
              clientConfig: { url: `${hooks.url}/validate`, caBundle: caBundleOf(certs) },
              rules: [
                {
                  operations: ["CREATE"],
                  apiGroups: [""],
                  apiVersions: ["v1"],
                  resources: ["pods", "configmaps"],
                },
              ],
              sideEffects: "None",
              admissionReviewVersions: ["v1"],
            },
          ],
        }),
      },
    );
    expect(created.status).toBe(201);
    // The plugin learns of the configuration from its watch: wait until a dry run reaches the webhook.
    for (let i = 0; i < 200 && hooks.received.length === 0; i++) {
      await fetch(`${api.url}/api/v1/namespaces/default/configmaps?dryRun=All`, {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "probe" } }),
      });
      await new Promise((r) => setTimeout(r, 10));
    }
    dir = await mkdtemp(join(tmpdir(), "webhook-kubectl-"));
    env = await plainKubectlEnv(dir, api.url);
  });

  afterAll(async () => {
    await api?.close();
    await hooks?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  const kubectl = (...args: string[]) => runKubectl(env, args);

  it("prints a webhook's warning and creates the pod", async () => {
    const r = await kubectl("run", "owned", "--image=nginx", "--labels=owner=team-a");
    expect(r.err).toBe("Warning: pods without resource limits will be refused from next week\n");
    expect([r.code, r.out]).toEqual([0, "pod/owned created\n"]);
  });

  it("prints the denial as the webhook worded it, and nothing is stored", async () => {
    const r = await kubectl("run", "orphan", "--image=nginx");
    expect(r.code).toBe(1);
    expect(r.err).toBe(
      'Error from server (Forbidden): admission webhook "owner.example.com" denied the request: every pod needs an owner label\n',
    );
    const get = await kubectl("get", "pod", "orphan");
    expect(get.err).toBe('Error from server (NotFound): pods "orphan" not found\n');
  });
});
