/**
 * The real kubectl against serveDiscovery and decodeProtobuf, through a capture server that
 * stands in for the rest of the API server: it records every request, decodes create bodies
 * and echoes them back with a resourceVersion.
 */
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, expect, it } from "vitest";
import { describeWithTools } from "../../scripts/external-tools.ts";
import type { KubeObject } from "../api/meta.ts";
import { serveDiscovery } from "./discovery.ts";
import { isStatusError } from "./errors.ts";
import { protobufMediaType } from "./negotiation.ts";
import { openAPIDocument } from "./openapi.ts";
import { resources as servedResources } from "./resources.ts";
import { type KubectlResult, runKubectl } from "./testing/kubectl-env.ts";

/**
 * What kubectl explain is asked about for every served kind: its resource's plural name. A
 * lowercased kind does not always resolve: SelfSubjectReview's singular name is upstream's
 * "selfsubjectrulesreview", so `kubectl explain selfsubjectreview` finds nothing.
 */
const explainNames = () => servedResources.map((r) => r.resource);

import { decodeProtobuf } from "./protobuf/decode.ts";

interface Captured {
  method: string;
  path: string;
  query: URLSearchParams;
  contentType?: string;
  accept?: string;
  object?: KubeObject;
  raw: string;
}

const testdata = join(dirname(fileURLToPath(import.meta.url)), "protobuf", "testdata");

describeWithTools("kubectl v1.32 against discovery, OpenAPI and protobuf decoding", ["kubectl"], (tools) => {
  let server: Server;
  let dir: string;
  let captured: Captured[] = [];
  const stored = new Map<string, KubeObject>();
  let allowed = true;
  /** When on, the OpenAPI documents omit `fieldValidation`, so kubectl validates on the client. */
  let hideFieldValidation = false;

  function body(req: IncomingMessage): Promise<Buffer> {
    return new Promise((resolve) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => resolve(Buffer.concat(chunks)));
    });
  }

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "kubectl-discovery-"));
    server = createServer(async (req, res) => {
      const url = new URL(req.url ?? "/", "http://x");
      const bytes = await body(req);
      const c: Captured = {
        method: req.method ?? "",
        path: url.pathname,
        query: url.searchParams,
        contentType: req.headers["content-type"],
        accept: req.headers.accept,
        raw: bytes.toString("latin1"),
      };
      captured.push(c);
      const json = (code: number, obj: unknown) => {
        res.writeHead(code, { "Content-Type": "application/json" });
        res.end(JSON.stringify(obj));
      };
      const gv = /^\/openapi\/v3\/(api\/v1|apis\/([^/]+)\/([^/]+))$/.exec(url.pathname);
      if (hideFieldValidation && gv) {
        const doc = openAPIDocument(gv[2] ?? "", gv[3] ?? "v1");
        const text = JSON.stringify(doc).replaceAll(
          '"name":"fieldValidation"',
          '"name":"notFieldValidation"',
        );
        res.writeHead(200, { "Content-Type": "application/json" });
        res.end(text);
        return;
      }
      if (serveDiscovery(req, res)) return;
      try {
        if (c.method === "POST") {
          c.object = c.contentType?.startsWith(protobufMediaType)
            ? decodeProtobuf(new Uint8Array(bytes))
            : (JSON.parse(bytes.toString("utf8")) as KubeObject);
          const obj = structuredClone(c.object);
          obj.metadata = { ...obj.metadata, resourceVersion: "7", uid: "u-1" };
          if (obj.kind === "SelfSubjectAccessReview") {
            obj.status = { allowed };
          } else {
            stored.set(`${url.pathname}/${obj.metadata.name}`, obj);
          }
          return json(201, obj);
        }
        const hit = stored.get(url.pathname);
        if (hit && (c.method === "GET" || c.method === "PATCH")) return json(200, hit);
        json(404, {
          kind: "Status",
          apiVersion: "v1",
          metadata: {},
          status: "Failure",
          reason: "NotFound",
          code: 404,
        });
      } catch (e) {
        if (isStatusError(e)) return json(e.code, e.status);
        json(500, { kind: "Status", apiVersion: "v1", status: "Failure", message: String(e), code: 500 });
      }
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const port = (server.address() as AddressInfo).port;
    await writeFile(
      join(dir, "kubeconfig"),
      [
        "apiVersion: v1",
        "kind: Config",
        `clusters: [{name: c, cluster: {server: "http://127.0.0.1:${port}"}}]`,
        "users: [{name: u, user: {}}]",
        "contexts: [{name: c, context: {cluster: c, user: u, namespace: default}}]",
        "current-context: c",
      ].join("\n"),
    );
  });

  afterAll(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await rm(dir, { recursive: true, force: true });
  });

  let cacheN = 0;
  /** Runs kubectl with a fresh discovery cache, so every run really asks the server. */
  function kubectl(...args: string[]): Promise<KubectlResult> {
    const cache = join(dir, `cache-${++cacheN}`);
    const argv = ["--kubeconfig", join(dir, "kubeconfig"), "--cache-dir", cache, ...args];
    return runKubectl(process.env, argv, { kubectl: tools.kubectl.path });
  }

  it("lists our groups and resources (api-versions, api-resources from aggregated discovery)", async () => {
    captured = [];
    const versions = await kubectl("api-versions");
    expect(versions.out.trim().split("\n")).toEqual([
      "admissionregistration.k8s.io/v1",
      "apps/v1",
      "authentication.k8s.io/v1",
      "authorization.k8s.io/v1",
      "coordination.k8s.io/v1",
      "discovery.k8s.io/v1", // EndpointSlices
      "policy/v1", // chapter 5: PodDisruptionBudgets
      "rbac.authorization.k8s.io/v1",
      "scheduling.k8s.io/v1",
      "v1",
    ]);
    const discovery = captured.filter((c) => c.path === "/api" || c.path === "/apis");
    expect(discovery.map((c) => c.accept)).toEqual([
      "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json",
      "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json",
    ]);
    // Aggregated discovery answered everything: no request per group version followed.
    expect(captured.some((c) => c.path === "/api/v1" || c.path.startsWith("/apis/apps"))).toBe(false);

    const res = await kubectl("api-resources", "--no-headers");
    const rows = res.out
      .trim()
      .split("\n")
      .map((l) => l.trim().split(/\s+/));
    expect(res.err).toBe("");
    expect(rows).toContainEqual(["pods", "po", "v1", "true", "Pod"]);
    expect(rows).toContainEqual(["deployments", "deploy", "apps/v1", "true", "Deployment"]);
    expect(rows).toContainEqual([
      "selfsubjectaccessreviews",
      "authorization.k8s.io/v1",
      "false",
      "SelfSubjectAccessReview",
    ]);
    expect(rows).toContainEqual(["clusterroles", "rbac.authorization.k8s.io/v1", "false", "ClusterRole"]);
    // 14 of chapter 2, then chapter 3's four RBAC kinds three more access reviews, the two webhook configurations, limitranges, resourcequotas and selfsubjectreviews,
    // and (ValidatingAdmissionPolicy) validatingadmissionpolicies and validatingadmissionpolicybindings.
    // chapter 5: poddisruptionbudgets; endpointslices.
    expect(rows).toHaveLength(30);
    expect(rows).toContainEqual(["endpointslices", "discovery.k8s.io/v1", "true", "EndpointSlice"]);
    expect(rows).toContainEqual([
      "mutatingwebhookconfigurations",
      "admissionregistration.k8s.io/v1",
      "false",
      "MutatingWebhookConfiguration",
    ]);
    expect(rows).toContainEqual([
      "selfsubjectreviews",
      "authentication.k8s.io/v1",
      "false",
      "SelfSubjectReview",
    ]);
  });

  it.each([
    [
      "configmap",
      ["create", "configmap", "cm1", "--from-literal=a=b", "--from-literal=c=d", "--from-file=blob=BIN"],
    ],
    [
      "secret",
      ["create", "secret", "generic", "s1", "--from-literal=password=hunter2", "--type=example.com/kind"],
    ],
    ["deployment-zero", ["create", "deployment", "idle", "--image=nginx", "--replicas=0"]],
    ["service-nodeport", ["create", "service", "nodeport", "np", "--tcp=80:http", "--node-port=30080"]],
    ["priorityclass", ["create", "priorityclass", "high", "--value=1000", "--description=important"]],
  ])("kubectl %s: sends protobuf, which decodes to kubectl's own JSON", async (fixture, args) => {
    const bin = join(dir, "bin.dat");
    await writeFile(bin, new Uint8Array([0x00, 0x01, 0xff, 0xfe]));
    captured = [];
    const res = await kubectl(...args.map((a) => a.replace("BIN", bin)));
    expect(res.err).toBe("");
    expect(res.code).toBe(0);
    const posts = captured.filter((c) => c.method === "POST");
    expect(posts).toHaveLength(1);
    expect(posts[0].contentType).toBe("application/vnd.kubernetes.protobuf");
    expect(posts[0].accept).toBe("application/vnd.kubernetes.protobuf,application/json");
    expect(posts[0].query.get("fieldManager")).toBe("kubectl-create");
    expect(posts[0].query.get("fieldValidation")).toBe("Strict");
    expect(posts[0].object).toEqual(JSON.parse(await readFile(join(testdata, `${fixture}.json`), "utf8")));
  });

  it("auth can-i posts a protobuf SelfSubjectAccessReview and prints the answer", async () => {
    captured = [];
    allowed = true;
    const yes = await kubectl("auth", "can-i", "create", "pods");
    expect([yes.code, yes.out.trim()]).toEqual([0, "yes"]);
    const post = captured.find((c) => c.method === "POST");
    expect(post?.path).toBe("/apis/authorization.k8s.io/v1/selfsubjectaccessreviews");
    expect(post?.contentType).toBe("application/vnd.kubernetes.protobuf");
    expect(post?.object?.spec).toEqual({
      resourceAttributes: { namespace: "default", verb: "create", resource: "pods" },
    });
    allowed = false;
    const no = await kubectl("auth", "can-i", "delete", "deployments");
    expect([no.code, no.out.trim()]).toEqual([1, "no"]);
    allowed = true;
  });

  it("apply: finds fieldValidation in OpenAPI v3, sends JSON, then a strategic merge patch keyed by container name", async () => {
    const manifest = (image: string) =>
      JSON.stringify({
        apiVersion: "apps/v1",
        kind: "Deployment",
        metadata: { name: "web", labels: { app: "web" } },
        spec: {
          replicas: 2,
          selector: { matchLabels: { app: "web" } },
          template: {
            metadata: { labels: { app: "web" } },
            spec: { containers: [{ name: "nginx", image, ports: [{ containerPort: 80 }] }] },
          },
        },
      });
    const file = join(dir, "web.json");
    await writeFile(file, manifest("nginx:1.27"));
    captured = [];
    const first = await kubectl("apply", "-f", file);
    expect([first.code, first.out.trim(), first.err]).toEqual([0, "deployment.apps/web created", ""]);
    expect(captured.map((c) => c.path)).toContain("/openapi/v3/apis/apps/v1");
    expect(captured.some((c) => c.path.startsWith("/openapi/v2"))).toBe(false);
    const post = captured.find((c) => c.method === "POST");
    expect(post?.contentType).toBe("application/json");
    expect(post?.query.get("fieldValidation")).toBe("Strict");

    await writeFile(file, manifest("nginx:1.28"));
    captured = [];
    const second = await kubectl("apply", "-f", file);
    expect([second.code, second.err]).toEqual([0, ""]);
    const patch = captured.find((c) => c.method === "PATCH");
    expect(patch?.contentType).toBe("application/strategic-merge-patch+json");
    const spec = JSON.parse(patch?.raw ?? "{}").spec.template.spec;
    expect(spec["$setElementOrder/containers"]).toEqual([{ name: "nginx" }]);
    expect(spec.containers).toEqual([{ image: "nginx:1.28", name: "nginx" }]);
  });

  it("without fieldValidation in OpenAPI v3, apply falls back to client-side validation against protobuf OpenAPI v2", async () => {
    // kubectl 1.32 validates on the client only against the OpenAPI v2 document, fetched as
    // gnostic protobuf. Ours describes no kind (openapi-v2.ts), so the client finds no schema and
    // lets the object through, and still asks the server for Strict field validation.
    hideFieldValidation = true;
    try {
      const file = join(dir, "cfg.yaml");
      await writeFile(file, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cfg}\ndata: {a: '1'}\n");
      captured = [];
      const res = await kubectl("apply", "-f", file);
      expect([res.code, res.err]).toEqual([0, ""]);
      const v2 = captured.find((c) => c.path === "/openapi/v2");
      expect(v2?.accept).toBe("application/com.github.proto-openapi.spec.v2@v1.0+protobuf");
      expect(captured.find((c) => c.method === "POST")?.query.get("fieldValidation")).toBe("Strict");
    } finally {
      hideFieldValidation = false;
    }
  });

  it("explain walks our OpenAPI v3 schemas", async () => {
    const res = await kubectl("explain", "pod.spec.containers.ports");
    expect(res.err).toBe("");
    expect(res.out).toContain("FIELD: ports <[]ContainerPort>");
    expect(res.out).toMatch(/containerPort\s+<integer> -required-/);
    expect(res.out).toContain("Number of the port to expose on the pod's IP address.");
    const resources = await kubectl("explain", "deployment.spec.template.spec.containers.resources");
    expect(resources.out).toContain("GROUP:      apps");
    expect(resources.out).toMatch(/requests\s+<map\[string\]Quantity>/);
  });

  it("explain describes every served kind, and every field on the way down", async () => {
    const paths = [
      ...new Set(explainNames()),
      "node.spec",
      "node.status",
      "node.status.nodeInfo",
      "pod.spec",
      "pod.spec.containers",
      "pod.spec.containers.livenessProbe.httpGet",
      "pod.spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution",
      "pod.spec.ephemeralContainers",
      "pod.status.containerStatuses.state.terminated",
      "endpoints.subsets.addresses",
      "deployment.spec.strategy.rollingUpdate",
      "service.spec.ports",
      "clusterrole.rules",
      "clusterrole.aggregationRule",
      "rolebinding.subjects",
      "rolebinding.roleRef",
      "subjectaccessreview.spec.resourceAttributes",
      "selfsubjectrulesreviews.status.resourceRules", // plural: the singular is also SelfSubjectReview's
      "selfsubjectrulesreviews.status.nonResourceRules",
      "selfsubjectreviews.status.userInfo",
      "validatingwebhookconfiguration.webhooks.rules",
      "validatingwebhookconfiguration.webhooks.clientConfig.service",
      "mutatingwebhookconfiguration.webhooks.matchConditions",
      "limitrange.spec.limits",
      "resourcequota.spec.scopeSelector.matchExpressions",
      "resourcequota.status",
    ];
    for (const path of paths) {
      const res = await kubectl("explain", path);
      expect([path, res.code, res.err]).toEqual([path, 0, ""]);
      // kubectl prints these where a kind or field has no description.
      expect(res.out, path).not.toMatch(/<no description>|<empty>/);
    }
    const node = await kubectl("explain", "node");
    expect(node.out).toMatch(/DESCRIPTION:\n\s+Node is a worker machine/);
    const spec = await kubectl("explain", "node.spec");
    expect(spec.out).toContain("FIELD: spec <NodeSpec>");
    expect(spec.out).toMatch(/unschedulable\s+<boolean>\n\s+If true, no new pods are scheduled/);
    const rule = await kubectl("explain", "clusterrole.rules");
    expect(rule.out).toContain("GROUP:      rbac.authorization.k8s.io");
    expect(rule.out).toMatch(/verbs\s+<\[\]string> -required-\n\s+The verbs the rule allows/);
  }, 120_000);
});
