/**
 * The audit log through the API server: one JSON line per stage, each request's events tied by
 * its Audit-Id, the levels' fields, the authorization decision and PodSecurity's annotations.
 */
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Authenticator } from "../authn/authenticator.ts";
import type { Authorizer } from "../authz/authorizer.ts";
import { type APIServer, startAPIServer } from "../server.ts";
import { newLogBackend } from "./backend.ts";
import type { Event } from "./event.ts";
import { loadPolicy } from "./policy.ts";

const policy = loadPolicy(`
apiVersion: audit.k8s.io/v1
kind: Policy
rules:
  - level: None
    nonResourceURLs: ["/healthz*"]
  - level: RequestResponse
    resources: [{group: "", resources: ["configmaps"]}]
    omitManagedFields: true
  - level: Request
    resources: [{group: "", resources: ["pods"]}]
  - level: Metadata
`);

const jane = { name: "jane", uid: "u-1", groups: ["dev", "system:authenticated"] };
const authenticator: Authenticator = {
  authenticateRequest: async (req) => (req.headers.authorization === "Bearer jane" ? { user: jane } : null),
};
const authorizer: Authorizer = {
  authorize: async (a) =>
    a.verb === "delete"
      ? { decision: "deny", reason: "deletes are not allowed here" }
      : {
          decision: "allow",
          reason: 'RBAC: allowed by ClusterRoleBinding "dev" of ClusterRole "edit" to Group "dev"',
        },
};

const micro = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/;

describe("the audit log", () => {
  let server: APIServer;
  let dir: string;
  let logPath: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "audit-"));
    logPath = join(dir, "audit.log");
    server = await startAPIServer({
      insecurePort: 0,
      authenticator,
      authorizer,
      admission: {},
      audit: { policy, backend: newLogBackend(logPath) },
    });
  });
  afterAll(async () => {
    await server?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  const send = (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
    fetch(`${server.url}${path}`, {
      method,
      headers: {
        Authorization: "Bearer jane",
        "Content-Type": "application/json",
        "User-Agent": "audit-test/1.0",
        ...headers,
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });

  async function lines(): Promise<Event[]> {
    const text = await readFile(logPath, "utf8").catch(() => "");
    return text
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Event);
  }

  /** The request's events, once its last stage is written (the log is written as the response closes). */
  async function eventsOf(res: Response, last = "ResponseComplete", readBody = true): Promise<Event[]> {
    const id = res.headers.get("audit-id");
    if (readBody) await res.arrayBuffer().catch(() => undefined);
    for (let i = 0; i < 200; i++) {
      const mine = (await lines()).filter((e) => e.auditID === id);
      if (mine.some((e) => e.stage === last)) return mine;
      await new Promise((r) => setTimeout(r, 10));
    }
    return (await lines()).filter((e) => e.auditID === id);
  }

  it("traces a create stage by stage, at RequestResponse: the bodies, the decision, the response", async () => {
    const cm = { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "cm1" }, data: { a: "1" } };
    const res = await send("POST", "/api/v1/namespaces/default/configmaps?fieldManager=audit", cm);
    expect(res.status).toBe(201);
    const events = await eventsOf(res);
    expect(events.map((e) => e.stage)).toEqual(["RequestReceived", "ResponseComplete"]);
    const [received, complete] = events;
    expect(Object.keys(complete)).toEqual([
      "kind",
      "apiVersion",
      "level",
      "auditID",
      "stage",
      "requestURI",
      "verb",
      "user",
      "sourceIPs",
      "userAgent",
      "objectRef",
      "responseStatus",
      "requestObject",
      "responseObject",
      "requestReceivedTimestamp",
      "stageTimestamp",
      "annotations",
    ]);
    expect(complete).toMatchObject({
      kind: "Event",
      apiVersion: "audit.k8s.io/v1",
      level: "RequestResponse",
      auditID: res.headers.get("audit-id"),
      requestURI: "/api/v1/namespaces/default/configmaps?fieldManager=audit",
      verb: "create",
      user: { username: "jane", uid: "u-1", groups: ["dev", "system:authenticated"] },
      sourceIPs: ["127.0.0.1"],
      userAgent: "audit-test/1.0",
      objectRef: { resource: "configmaps", namespace: "default", name: "cm1", apiVersion: "v1" },
      responseStatus: { metadata: {}, code: 201 },
      requestObject: cm,
      responseObject: {
        kind: "ConfigMap",
        metadata: { name: "cm1", namespace: "default" },
        data: { a: "1" },
      },
      annotations: {
        "authorization.k8s.io/decision": "allow",
        "authorization.k8s.io/reason":
          'RBAC: allowed by ClusterRoleBinding "dev" of ClusterRole "edit" to Group "dev"',
      },
    });
    // omitManagedFields: the stored object has them, the log does not.
    expect((complete.responseObject as { metadata: object }).metadata).not.toHaveProperty("managedFields");
    expect(received.responseStatus).toBeUndefined();
    expect(received.requestReceivedTimestamp).toMatch(micro);
    expect(complete.stageTimestamp).toMatch(micro);
    expect(complete.requestReceivedTimestamp).toBe(received.requestReceivedTimestamp);
    expect(complete.stageTimestamp >= received.stageTimestamp).toBe(true);
  });

  it("Request level: the request body, no response body; PodSecurity's audit annotation", async () => {
    await send("POST", "/api/v1/namespaces", {
      apiVersion: "v1",
      kind: "Namespace",
      metadata: { name: "audited", labels: { "pod-security.kubernetes.io/audit": "baseline" } },
    });
    const pod = {
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "p" },
      spec: { hostPID: true, containers: [{ name: "c", image: "nginx" }] },
    };
    const res = await send("POST", "/api/v1/namespaces/audited/pods", pod);
    expect(res.status).toBe(201);
    const complete = (await eventsOf(res)).find((e) => e.stage === "ResponseComplete");
    expect(complete?.level).toBe("Request");
    expect(complete?.requestObject).toMatchObject(pod);
    expect(complete).not.toHaveProperty("responseObject");
    expect(complete?.annotations).toEqual({
      "authorization.k8s.io/decision": "allow",
      "authorization.k8s.io/reason":
        'RBAC: allowed by ClusterRoleBinding "dev" of ClusterRole "edit" to Group "dev"',
      "pod-security.kubernetes.io/enforce-policy": "privileged:latest",
      "pod-security.kubernetes.io/audit-violations":
        'would violate PodSecurity "baseline:latest": host namespaces (hostPID=true)',
    });
  });

  it("Metadata level: who and what, no bodies", async () => {
    const res = await send("GET", "/api/v1/namespaces/default");
    const complete = (await eventsOf(res)).find((e) => e.stage === "ResponseComplete");
    expect(complete).toMatchObject({
      level: "Metadata",
      verb: "get",
      objectRef: { resource: "namespaces", name: "default" },
    });
    expect(complete).not.toHaveProperty("requestObject");
    expect(complete).not.toHaveProperty("responseObject");
  });

  // Upstream's WithAudit writes RequestReceived before WithImpersonation runs, so only the later
  // stages carry impersonatedUser (k8s.io/apiserver pkg/endpoints/filters/audit.go, impersonation.go).
  it("impersonation: user is who sent the request; impersonatedUser, from ResponseComplete on, who it acted as", async () => {
    const res = await send("GET", "/api/v1/namespaces/default", undefined, {
      "Impersonate-User": "bob",
      "Impersonate-Group": "qa",
    });
    expect(res.status).toBe(200);
    const events = await eventsOf(res);
    expect(events.map((e) => e.stage)).toEqual(["RequestReceived", "ResponseComplete"]);
    for (const e of events)
      expect(e.user).toEqual({ username: "jane", uid: "u-1", groups: ["dev", "system:authenticated"] });
    expect(events[0]).not.toHaveProperty("impersonatedUser");
    expect(events[1].impersonatedUser).toEqual({ username: "bob", groups: ["qa", "system:authenticated"] });
  });

  it("no impersonation: no impersonatedUser field", async () => {
    const res = await send("GET", "/api/v1/namespaces/default");
    for (const e of await eventsOf(res)) expect(e).not.toHaveProperty("impersonatedUser");
  });
  it("None: nothing is written", async () => {
    const res = await send("GET", "/healthz");
    expect(res.status).toBe(200);
    await res.text();
    // A later request's events are written after this one's would have been.
    await eventsOf(await send("GET", "/api/v1/namespaces/kube-system"));
    expect((await lines()).filter((e) => e.auditID === res.headers.get("audit-id"))).toEqual([]);
  });

  it("a refusal: the decision is forbid, the reason is kept, responseStatus is the Status", async () => {
    const res = await send("DELETE", "/api/v1/namespaces/default/configmaps/cm1");
    expect(res.status).toBe(403);
    const complete = (await eventsOf(res)).find((e) => e.stage === "ResponseComplete");
    expect(complete?.annotations).toEqual({
      "authorization.k8s.io/decision": "forbid",
      "authorization.k8s.io/reason": "deletes are not allowed here",
    });
    expect(complete?.responseStatus).toMatchObject({
      metadata: {},
      status: "Failure",
      message:
        'configmaps "cm1" is forbidden: User "jane" cannot delete resource "configmaps" in API group "" in the namespace "default": deletes are not allowed here',
      reason: "Forbidden",
      details: { name: "cm1", kind: "configmaps" },
      code: 403,
    });
  });

  it("a watch gets ResponseStarted when it starts and ResponseComplete when it ends", async () => {
    const abort = new AbortController();
    const res = await fetch(`${server.url}/api/v1/namespaces/default/configmaps?watch=1`, {
      headers: { Authorization: "Bearer jane" },
      signal: abort.signal,
    });
    expect(res.status).toBe(200);
    const started = await eventsOf(res, "ResponseStarted", false);
    expect(started.map((e) => e.stage)).toEqual(["RequestReceived", "ResponseStarted"]);
    abort.abort();
    const all = await eventsOf(res, "ResponseComplete", false);
    expect(all.map((e) => e.stage)).toEqual(["RequestReceived", "ResponseStarted", "ResponseComplete"]);
    expect(all[1]).toMatchObject({ verb: "watch", responseStatus: { metadata: {}, code: 200 } });
    expect(all[2]).not.toHaveProperty("responseObject");
  });

  it("a failed authentication is one ResponseStarted event without a user", async () => {
    const res = await send("GET", "/api/v1/namespaces", undefined, { Authorization: "Bearer nobody" });
    expect(res.status).toBe(401);
    const events = await eventsOf(res, "ResponseStarted");
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      stage: "ResponseStarted",
      level: "Metadata",
      verb: "list",
      user: {},
      responseStatus: { metadata: {}, message: "Authentication failed, attempted: bearer", code: 401 },
    });
  });

  it("the file is JSON lines: one object per line, each line ended", async () => {
    const text = await readFile(logPath, "utf8");
    expect(text.endsWith("\n")).toBe(true);
    const all = text.slice(0, -1).split("\n");
    expect(all.length).toBeGreaterThan(10);
    for (const line of all)
      expect(JSON.parse(line)).toMatchObject({ kind: "Event", apiVersion: "audit.k8s.io/v1" });
  });
});

describe("the Panic stage", () => {
  it("replaces ResponseComplete when the handler breaks", async () => {
    const { createServer } = await import("node:http");
    const { RequestAudit } = await import("./request.ts");
    const { newRequestInfo } = await import("../request-info.ts");
    const events: Event[] = [];
    let closed: () => void = () => {};
    const responseClosed = new Promise<void>((r) => {
      closed = r;
    });
    const auditor = {
      policy,
      backend: { processEvents: (...e: Event[]) => void events.push(...e), shutdown() {} },
    };
    const server = createServer((req, res) => {
      const audit = new RequestAudit(auditor, req, res, "id-1");
      res.once("close", () => setImmediate(closed)); // after the audit's own close listener
      audit.begin(jane, newRequestInfo("GET", req.url ?? "/"));
      audit.panic(new TypeError("Cannot read properties of undefined (reading 'metadata')"));
      res.writeHead(500, { "Content-Type": "application/json" });
      res.end("{}");
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    try {
      const { port } = server.address() as { port: number };
      await (await fetch(`http://127.0.0.1:${port}/api/v1/namespaces/default/pods/web`)).text();
      await responseClosed;
      expect(events.map((e) => e.stage)).toEqual(["RequestReceived", "Panic"]);
      expect(events[1].responseStatus).toEqual({
        metadata: {},
        status: "Failure",
        message: "APIServer panic'd: Cannot read properties of undefined (reading 'metadata')",
        reason: "InternalError",
        code: 500,
      });
    } finally {
      server.close();
    }
  });
});
