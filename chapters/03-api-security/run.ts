/**
 * Chapter 3's demo — the API server's gatekeepers at work, over real HTTPS with real certificates
 * and tokens: authentication, impersonation, authorization (RBAC), admission (a mutating webhook,
 * PodSecurity) and the audit log that watches them all.
 *
 * Solves: a learner who has read how a request passes the pipeline (TLS → authentication →
 * impersonation → authorization → mutating admission → validation → validating admission →
 * storage, with audit around it) should *see* each gate decide —
 * - a request with no credential is `system:anonymous`: allowed to read `/version` (the
 *   system:public-info-viewer role), 403 for listing pods, in upstream's words;
 * - jane, with a bearer token from the token file, is authenticated but not authorized: 403;
 *   a RoleBinding later, the same request is allowed — RBAC reads the binding as it is written;
 * - a SelfSubjectAccessReview (what `kubectl auth can-i` sends) asks the authorizer without
 *   doing the thing;
 * - the admin (a client certificate, O=system:masters) may act as jane (`kubectl --as=jane`)
 *   and is then only what jane is; jane may not act as anyone;
 * - a mutating webhook — an HTTPS server in this process, its certificate signed by the
 *   cluster's CA — adds a label to every pod created, as the API server's admission chain calls
 *   it with an AdmissionReview; PodSecurity refuses a privileged pod in a `baseline` namespace,
 *   and ResourceQuota the pod beyond the namespace's quota;
 * - the audit log holds one JSON line per stage of each request: who, what, the decision and why.
 *
 * Everything runs in this process: the API server (code/apiserver/server.ts, `startAPIServer`)
 * on an HTTPS port only, as `kube-apiserver --client-ca-file --token-auth-file
 * --authorization-mode=Node,RBAC --enable-admission-plugins=… --audit-policy-file
 * --audit-log-path` would start (code/cmd/kube-apiserver.ts), over an embedded store in memory,
 * and the webhook. The PKI (code/pki, as `npm run pki`) is made once in
 * `.tmp/chapter-03/pki/` and kept: RSA keys are slow to make, and a learner's kubeconfig keeps
 * working across runs. The token file, the audit policy and the audit log are there too. Then
 * the demo writes a kubeconfig for the admin certificate (and one for jane's token) and keeps
 * serving kubectl until Ctrl-C.
 * Ctrl-C, during the tour or after it, stops the API server and the webhook before the demo exits
 * (a second Ctrl-C exits at once); the files stay, and every object, in memory, is gone.
 *
 * Usage: npm run chapter -- 3 [--once] [--port N]
 *   --once     exit after the tour instead of serving (also: CHAPTER_ONCE=1); tests use it
 *   --port N   serve the API (HTTPS) on 127.0.0.1:N (default: a free port)
 *   CHAPTER_TMP=<dir>   write the PKI, the kubeconfig and the logs there instead of .tmp/chapter-03
 *
 * @upstream none — course demo
 * @chapter 03-api-security
 */
import type { KeyObject, X509Certificate } from "node:crypto";
import { readFile, rm, writeFile } from "node:fs/promises";
import { request as httpsRequest } from "node:https";
import { join } from "node:path";
import { stringify } from "yaml";
import { newLogBackend } from "../../code/apiserver/audit/backend.ts";
import type { Event } from "../../code/apiserver/audit/event.ts";
import { loadPolicy } from "../../code/apiserver/audit/policy.ts";
import { type APIServer, startAPIServer } from "../../code/apiserver/server.ts";
import {
  reviewResponse,
  startWebhookServer,
  type WebhookServer,
} from "../../code/apiserver/testing/webhook-server.ts";
import { ensurePKI, type PKILayout } from "../../code/pki/certs.ts";
import { PKIError } from "../../code/pki/errors.ts";
import { createWithCerts, serializeKubeConfig } from "../../code/pki/kubeconfig.ts";
import {
  encodeCertPEM,
  encodePrivateKeyPEM,
  newPrivateKey,
  newSignedCert,
  parseCertPEM,
  parsePrivateKeyPEM,
} from "../../code/pki/pki-helpers.ts";
import {
  answer,
  bold,
  callJSON,
  cut,
  cyan,
  dim,
  green,
  heading,
  note,
  type Obj,
  type Reply,
  red,
  request,
  requestLog,
  runDemo,
  say,
  serveUntilInterrupt,
  servingDemo,
  sleep,
  statusLine,
  step,
  stopOnInterrupt,
  suggest,
  tryKubectl,
} from "../demo.ts";

/** The flags, and where the demo keeps what kubectl needs and the PKI (.tmp/chapter-03, or CHAPTER_TMP). */
const { once, port, workDir } = servingDemo(3, "the API (HTTPS)");
const pkiDir = join(workDir, "pki");
const kubeconfigPath = join(workDir, "kubeconfig");
const janeKubeconfigPath = join(workDir, "jane.kubeconfig");
const tokenFile = join(workDir, "tokens.csv");
const auditPolicyFile = join(workDir, "audit-policy.yaml");
const auditLog = join(workDir, "audit.log");

/** jane's bearer token, as the token file lists it (a demo's secret: never use one like it). */
const janeToken = "jane-demo-token-0123456789";

// ─── HTTPS: what kubectl sends, with whose credentials ───────────────────────────────────────

/** Who sends a request: a client certificate, a bearer token, or nothing at all. */
interface Credential {
  label: string;
  cert?: string;
  key?: string;
  token?: string;
}

let api = "";
/** The cluster CA (ca.crt): the client trusts the server's certificate because this CA signed it. */
let caPEM = "";

/** One request over HTTPS, as `who`, the whole answer read; the body parsed as JSON. */
function call(
  who: Credential,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<Reply> {
  const options = {
    method,
    ca: caPEM,
    cert: who.cert,
    key: who.key,
    // One connection per request: no pooled socket outlives the server when the demo stops.
    agent: false,
    headers: {
      "User-Agent": "chapter-03-demo",
      ...(who.token ? { Authorization: `Bearer ${who.token}` } : {}),
      ...headers,
    },
  };
  return callJSON(httpsRequest, `${api}${path}`, options, body);
}

/** A request that must succeed: its object, or the Status it got, thrown. */
async function must(
  who: Credential,
  method: string,
  path: string,
  body?: unknown,
  headers?: Record<string, string>,
) {
  const r = await call(who, method, path, body, headers);
  if (r.code >= 300)
    throw new Error(`${who.label}: ${method} ${path} → ${statusLine({ ...r.body, code: r.code })}`);
  return r.body;
}

/** "403 Forbidden: <message>" — how an answer's Status is shown; `200 OK` for the rest. */
function replyLine(r: Reply): string {
  if (r.code < 300) return green(`${r.code} OK`);
  return red(statusLine({ ...r.body, code: r.code }));
}

/** Asks until `ok` holds (a watch-fed cache — RBAC's, the webhook plugin's — may lag a write). */
async function eventually<T>(what: string, ask: () => Promise<T>, ok: (t: T) => boolean): Promise<T> {
  const deadline = Date.now() + 5000;
  for (;;) {
    const t = await ask();
    if (ok(t) || Date.now() > deadline) {
      if (!ok(t)) throw new Error(`timed out after 5000 ms waiting for ${what}`);
      return t;
    }
    await sleep(20);
  }
}

// ─── the demo ────────────────────────────────────────────────────────────────────────────────

const ns = "demo";
const podsURL = `/api/v1/namespaces/${ns}/pods`;
const anonymous: Credential = { label: "anonymous" };
const jane: Credential = { label: "jane", token: janeToken };
let admin: Credential = { label: "admin" };

function pod(name: string, extra: Record<string, unknown> = {}): Obj {
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name, labels: { app: name } },
    spec: { containers: [{ name: "app", image: "nginx:1.27", ...extra }] },
  };
}

/**
 * A namespace, as the admin. The ServiceAccount admission plugin refuses a pod whose service
 * account does not exist; in a cluster the controller-manager's serviceaccount controller
 * (chapter 4) makes `default` in every new namespace — until then the API server does, as part of
 * the namespace's create.
 */
async function createNamespace(name: string, labels?: Record<string, string>): Promise<void> {
  await must(admin, "POST", "/api/v1/namespaces", {
    apiVersion: "v1",
    kind: "Namespace",
    metadata: labels ? { name, labels } : { name },
  });
}

async function main(): Promise<void> {
  heading("The API server's gatekeepers — authentication, authorization, admission and audit, over HTTPS");

  step("A PKI, a token file and an audit policy");
  const t0 = Date.now();
  const pki = await ensurePKI({ dir: pkiDir, nodes: ["node-1"] });
  if (pki instanceof PKIError) throw new Error(`the PKI in ${pkiDir}: ${pki.message}`);
  const layout: PKILayout = pki.layout;
  say(
    `${pki.written.length > 0 ? `made ${pki.written.length} files` : `kept all ${pki.kept.length} files`} in ${cyan(pkiDir)} ${dim(`(${Date.now() - t0} ms; as npm run pki -- --dir ${pkiDir})`)}`,
  );
  note("ca.crt signs the server's certificate (apiserver.crt) and every client's: admin.crt is");
  note("CN=kubernetes-admin, O=system:masters — the user and the group the API server will read from it");
  caPEM = await readFile(layout.caCert, "utf8");
  const adminId = layout.identities.find((i) => i.id === "admin");
  if (!adminId) throw new Error("the PKI has no admin identity");
  admin = {
    label: "admin",
    cert: await readFile(adminId.cert, "utf8"),
    key: await readFile(adminId.key, "utf8"),
  };
  // upstream's CSV: token,user,uid,"group1,group2"
  await writeFile(tokenFile, `${janeToken},jane,1001,"developers"\n`, { mode: 0o600 });
  say(`token file ${cyan(tokenFile)}: ${dim(`${janeToken.slice(0, 9)}…,jane,1001,"developers"`)}`);
  const policyText = [
    "apiVersion: audit.k8s.io/v1",
    "kind: Policy",
    "# Every request at Metadata: who, what, when, the answer — never a body.",
    "rules:",
    "- level: Metadata",
    "",
  ].join("\n");
  await writeFile(auditPolicyFile, policyText);
  // This run's requests only: the log is appended to, and the last run's would mislead.
  await rm(auditLog, { force: true });
  say(`audit policy ${cyan(auditPolicyFile)}: every request at level Metadata, to ${cyan(auditLog)}`);

  step("Start the API server: HTTPS only, authentication, Node and RBAC, admission, audit");
  let server: APIServer | undefined;
  const shutdown = async () => {
    await webhook?.close();
    await server?.close();
    say("stopped the API server and the webhook: every object was in memory, and is gone");
    say(
      `kept (git-ignored, for the next run): ${kubeconfigPath}, ${janeKubeconfigPath}, ${pkiDir}/, ${auditLog}`,
    );
  };
  // From here on, Ctrl-C — during the tour or while serving kubectl — stops both servers first.
  stopOnInterrupt(shutdown);
  const requests = requestLog();
  server = await startAPIServer({
    securePort: port,
    secureServing: { tlsCertFile: layout.apiServerCert, tlsPrivateKeyFile: layout.apiServerKey },
    authentication: { clientCAFile: layout.caCert, tokenAuthFile: tokenFile, anonymousAuth: true },
    authorizationModes: ["Node", "RBAC"],
    admission: {},
    audit: { policy: loadPolicy(policyText, `file ${auditPolicyFile}`), backend: newLogBackend(auditLog) },
    log: requests.log,
  });
  api = server.url;
  say(
    `Serving securely on ${cyan(api.replace(/^https:\/\//, ""))} ${dim("(upstream's words; no insecure port)")}`,
  );
  note(
    "as kube-apiserver --secure-port --tls-cert-file=pki/apiserver.crt --client-ca-file=pki/ca.crt --token-auth-file",
  );
  note(
    "  --anonymous-auth=true --authorization-mode=Node,RBAC --enable-admission-plugins=… --audit-policy-file --audit-log-path",
  );

  try {
    await anonymousRequests();
    await deniedThenAllowed();
    await canI();
    await impersonation();
    await mutatingWebhook(layout);
    await validatingAdmission();
    await auditTrail();
  } catch (e) {
    await webhook?.close();
    await server.close();
    throw e;
  }

  await writeKubeconfig(server, layout);
  await tryKubectl(kubeconfigPath, ["auth", "whoami"]);
  await serveUntilInterrupt(once, shutdown, requests);
}

async function anonymousRequests(): Promise<void> {
  step("No credential at all: system:anonymous");
  const version = await call(anonymous, "GET", "/version");
  say(request(`anonymous: GET /version`));
  say(answer(`${replyLine(version)}, gitVersion ${version.body.gitVersion}`));
  note(
    "allowed: the ClusterRoleBinding system:public-info-viewer grants /version, /healthz, /livez, /readyz",
  );
  note("to the group system:unauthenticated, which the anonymous authenticator puts every such request in");
  const pods = await call(anonymous, "GET", "/api/v1/namespaces/default/pods");
  say(request("anonymous: GET /api/v1/namespaces/default/pods"));
  say(answer(replyLine(pods)));
  const bad = await call({ label: "a wrong token", token: "not-a-token" }, "GET", "/version");
  say(request("a wrong token: GET /version"));
  say(answer(replyLine(bad)));
  note("a credential that fails is 401, never anonymous — and the answer says nothing of which check failed");
}

async function deniedThenAllowed(): Promise<void> {
  step("jane, with a bearer token: authenticated, not authorized — until a RoleBinding");
  await createNamespace(ns);
  const who = await must(jane, "POST", "/apis/authentication.k8s.io/v1/selfsubjectreviews", {
    apiVersion: "authentication.k8s.io/v1",
    kind: "SelfSubjectReview",
  });
  const u = who.status.userInfo;
  say(request("jane: POST selfsubjectreviews (kubectl auth whoami)"));
  say(answer(`username ${u.username}, uid ${u.uid}, groups ${JSON.stringify(u.groups)}`));
  const denied = await call(jane, "GET", podsURL);
  say(request(`jane: GET ${podsURL}`));
  say(answer(replyLine(denied)));

  await must(admin, "POST", `/apis/rbac.authorization.k8s.io/v1/namespaces/${ns}/roles`, {
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "Role",
    metadata: { name: "pod-reader" },
    rules: [{ apiGroups: [""], resources: ["pods"], verbs: ["get", "list", "watch"] }],
  });
  await must(admin, "POST", `/apis/rbac.authorization.k8s.io/v1/namespaces/${ns}/rolebindings`, {
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "RoleBinding",
    metadata: { name: "jane-reads-pods" },
    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: "pod-reader" },
    subjects: [{ apiGroup: "rbac.authorization.k8s.io", kind: "User", name: "jane" }],
  });
  say(
    `admin: Role ${ns}/pod-reader {pods: get, list, watch} and RoleBinding ${ns}/jane-reads-pods → User jane`,
  );
  const allowed = await eventually(
    "RBAC to see the binding",
    () => call(jane, "GET", podsURL),
    (r) => r.code === 200,
  );
  say(request(`jane: GET ${podsURL}`));
  say(answer(`${replyLine(allowed)}, ${allowed.body.items.length} pods`));
  lastAllowedAuditID = String(allowed.headers["audit-id"] ?? "");
  note(
    "the same request, the same credential: only the RoleBinding changed, and RBAC read it as it was written",
  );
}

/** The Audit-ID of jane's allowed list: the request the audit step traces. */
let lastAllowedAuditID = "";

async function canI(): Promise<void> {
  step("kubectl auth can-i: a SelfSubjectAccessReview asks without doing");
  const asks: [string, string, string?][] = [
    ["list", "pods"],
    ["delete", "pods"],
    ["list", "secrets"],
    ["get", "pods", "kube-system"],
  ];
  for (const [verb, resource, namespace = ns] of asks) {
    const review = await must(jane, "POST", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", {
      apiVersion: "authorization.k8s.io/v1",
      kind: "SelfSubjectAccessReview",
      spec: { resourceAttributes: { namespace, verb, resource } },
    });
    const yes = review.status.allowed === true;
    say(
      `jane: can-i ${verb} ${resource} -n ${namespace} → ${yes ? green("yes") : red("no")}${review.status.reason ? dim(` (${review.status.reason})`) : ""}`,
    );
  }
  note("the same authorizer as every request's; the review is created and answered, never stored");
}

async function impersonation(): Promise<void> {
  step("Impersonation: the admin acts as jane (kubectl --as=jane); jane may act as no one");
  const asJane = { "Impersonate-User": "jane" };
  const who = await must(
    admin,
    "POST",
    "/apis/authentication.k8s.io/v1/selfsubjectreviews",
    { apiVersion: "authentication.k8s.io/v1", kind: "SelfSubjectReview" },
    asJane,
  );
  say(request("admin --as=jane: POST selfsubjectreviews (kubectl auth whoami --as=jane)"));
  say(
    answer(`username ${who.status.userInfo.username}, groups ${JSON.stringify(who.status.userInfo.groups)}`),
  );
  const list = await call(admin, "GET", podsURL, undefined, asJane);
  say(request(`admin --as=jane: GET ${podsURL}`));
  say(answer(replyLine(list)));
  const del = await call(admin, "DELETE", `${podsURL}/anything`, undefined, asJane);
  say(request(`admin --as=jane: DELETE ${podsURL}/anything`));
  say(answer(replyLine(del)));
  note("impersonated, the admin is only jane: system:masters was the admin's group, not jane's");
  const escalate = await call(jane, "GET", podsURL, undefined, { "Impersonate-User": "kubernetes-admin" });
  say(request(`jane --as=kubernetes-admin: GET ${podsURL}`));
  say(answer(replyLine(escalate)));
  note(
    "impersonation is itself authorized: the verb impersonate on users, groups, uids — cluster-admin has it",
  );
}

/** The webhook server, once started: whoever stops the demo stops it too. */
let webhook: WebhookServer | undefined;

async function mutatingWebhook(layout: PKILayout): Promise<void> {
  step("A mutating webhook: the API server calls out, over HTTPS, and applies the patch it answers");
  // The webhook's serving certificate, signed by the cluster's CA: the caBundle is ca.crt.
  const ca = {
    cert: parseCertPEM(caPEM) as X509Certificate,
    key: parsePrivateKeyPEM(await readFile(layout.caKey, "utf8")) as KeyObject,
  };
  const key = await newPrivateKey("ECDSA-P256");
  const cert = await newSignedCert(
    {
      commonName: "label-injector",
      organization: [],
      altNames: { dnsNames: ["localhost"], ips: ["127.0.0.1"] },
      usages: ["serverAuth"],
    },
    key,
    ca,
    new Date(),
  );
  const certs = { caPEM, certPEM: encodeCertPEM(cert), keyPEM: encodePrivateKeyPEM(key) };
  const hook = await startWebhookServer(certs, (review) => {
    const labels = review.request.object?.metadata?.labels;
    // JSONPatch: add the label (and the labels map, if the pod has none).
    const patch = labels
      ? [{ op: "add", path: "/metadata/labels/injected-by", value: "label-injector" }]
      : [{ op: "add", path: "/metadata/labels", value: { "injected-by": "label-injector" } }];
    return reviewResponse(review, { patch });
  });
  webhook = hook;
  say(`webhook: ${cyan(`${hook.url}/mutate`)} ${dim("(its certificate signed by pki/ca.crt)")}`);
  const config = await must(
    admin,
    "POST",
    "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations",
    {
      apiVersion: "admissionregistration.k8s.io/v1",
      kind: "MutatingWebhookConfiguration",
      metadata: { name: "label-injector" },
      webhooks: [
        {
          name: "label-injector.course.example.com",
          clientConfig: { url: `${hook.url}/mutate`, caBundle: Buffer.from(caPEM).toString("base64") },
          rules: [{ operations: ["CREATE"], apiGroups: [""], apiVersions: ["v1"], resources: ["pods"] }],
          namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": ns } },
          sideEffects: "None",
          failurePolicy: "Fail",
          admissionReviewVersions: ["v1"],
        },
      ],
    },
  );
  say(
    `admin: MutatingWebhookConfiguration ${config.metadata.name}: CREATE pods in namespace ${ns} → ${hook.url}/mutate, failurePolicy Fail`,
  );
  // The plugin learns of the configuration from a watch: a dry run tells when it has.
  await eventually(
    "the webhook plugin to see the configuration",
    async () => {
      await call(admin, "POST", `${podsURL}?dryRun=All`, pod("probe"));
      return hook.received.length;
    },
    (n) => n > 0,
  );
  hook.received.length = 0;
  const created = await must(admin, "POST", podsURL, pod("web"));
  say(request(`admin: POST ${podsURL} {pod web, labels {"app":"web"}}`));
  const review = hook.received[0]?.review;
  if (review) {
    say(
      `  webhook got an AdmissionReview: ${review.request.operation} ${review.request.resource.resource} ${review.request.namespace}/${review.request.name} by ${review.request.userInfo.username}`,
    );
  } else {
    say(red("  the webhook got no AdmissionReview"));
  }
  say(answer(`201 Created, labels ${JSON.stringify(created.metadata.labels)}`));
  const stored = await must(admin, "GET", `${podsURL}/web`);
  say(
    `admin: GET ${podsURL}/web → label injected-by=${stored.metadata.labels?.["injected-by"] ?? red("absent!")} ${dim("(stored: the patch was applied before validation and storage)")}`,
  );
  note(
    `and the built-in mutating plugins ran too: serviceAccountName=${stored.spec.serviceAccountName}, ` +
      `${stored.spec.tolerations?.length ?? 0} tolerations (DefaultTolerationSeconds)`,
  );
}

async function validatingAdmission(): Promise<void> {
  step("Validating admission: PodSecurity refuses a privileged pod, ResourceQuota a pod too many");
  await createNamespace("locked", { "pod-security.kubernetes.io/enforce": "baseline" });
  say("admin: namespace locked, label pod-security.kubernetes.io/enforce=baseline");
  const refused = await call(
    admin,
    "POST",
    "/api/v1/namespaces/locked/pods",
    pod("root", { securityContext: { privileged: true } }),
  );
  say(request("admin: POST /api/v1/namespaces/locked/pods {pod root, privileged: true}"));
  say(answer(cut(replyLine(refused), 220)));
  note("admission answers everyone alike: even system:masters, allowed by RBAC, is refused here");
  await must(admin, "POST", "/api/v1/namespaces/locked/resourcequotas", {
    apiVersion: "v1",
    kind: "ResourceQuota",
    metadata: { name: "one-pod" },
    spec: { hard: { pods: "1" } },
  });
  say("admin: ResourceQuota locked/one-pod {hard: pods=1}");
  for (const name of ["first", "second"]) {
    const r = await call(admin, "POST", "/api/v1/namespaces/locked/pods", pod(name));
    say(request(`admin: POST /api/v1/namespaces/locked/pods {pod ${name}}`));
    say(answer(r.code === 201 ? green("201 Created") : cut(replyLine(r), 220)));
  }
  const quota = await must(admin, "GET", "/api/v1/namespaces/locked/resourcequotas/one-pod");
  note(
    `the quota's status: used pods=${quota.status?.used?.pods}, hard pods=${quota.status?.hard?.pods} — charged by the plugin, last in the chain`,
  );
}

async function auditTrail(): Promise<void> {
  step("The audit log: jane's allowed list, stage by stage");
  // The last stage is written as the response ends: wait for it.
  const events = await eventually(
    "the request's ResponseComplete event",
    async () =>
      (await readFile(auditLog, "utf8").catch(() => ""))
        .split("\n")
        .filter(Boolean)
        .map((l) => JSON.parse(l) as Event)
        .filter((e) => e.auditID === lastAllowedAuditID),
    (evs) => evs.some((e) => e.stage === "ResponseComplete"),
  );
  const total = (await readFile(auditLog, "utf8")).split("\n").filter(Boolean).length;
  say(
    `${cyan(auditLog)}: ${total} lines so far; Audit-ID ${lastAllowedAuditID} (the response's Audit-Id header):`,
  );
  for (const e of events) {
    say(
      `${bold(e.stage.padEnd(16))} ${e.stageTimestamp} ${e.verb} ${e.requestURI} user=${e.user.username} ` +
        `groups=${JSON.stringify(e.user.groups)}${e.responseStatus ? ` → ${e.responseStatus.code}` : ""}`,
    );
    for (const [k, v] of Object.entries(e.annotations ?? {})) say(`  ${dim(k)}: ${v}`);
  }
  const last = events.at(-1);
  if (last) say(dim(cut(JSON.stringify(last), 400)));
  note("Metadata level: who, what, when and the answer — never the request's or the response's body");
}

async function writeKubeconfig(server: APIServer, layout: PKILayout): Promise<void> {
  step("Now with the real kubectl");
  const adminId = layout.identities.find((i) => i.id === "admin");
  if (!adminId) throw new Error("the PKI has no admin identity");
  const config = createWithCerts({
    server: server.url,
    clusterName: "kubernetes",
    userName: adminId.user,
    caCert: caPEM,
    clientCert: await readFile(adminId.cert, "utf8"),
    clientKey: await readFile(adminId.key, "utf8"),
  });
  await writeFile(kubeconfigPath, serializeKubeConfig(config), { mode: 0o600 });
  say(
    `kubeconfig written to ${cyan(kubeconfigPath)} ${dim("(the admin certificate; the same path every run, this run's port)")}`,
  );
  // jane's: her bearer token, no client certificate — with both, the x509 authenticator, first in
  // the union, would decide, and the request would be the admin's.
  const janeConfig = {
    apiVersion: "v1",
    kind: "Config",
    clusters: [config.clusters[0]],
    contexts: [{ name: "jane@kubernetes", context: { cluster: "kubernetes", user: "jane", namespace: ns } }],
    "current-context": "jane@kubernetes",
    users: [{ name: "jane", user: { token: janeToken } }],
  };
  await writeFile(janeKubeconfigPath, stringify(janeConfig, { lineWidth: 0, indentSeq: false }), {
    mode: 0o600,
  });
  say(`and jane's, with her token: ${cyan(janeKubeconfigPath)}`);
  say("in another terminal:");
  const commands: [string, string?][] = [
    [`export KUBECONFIG=${kubeconfigPath}`],
    ["kubectl auth whoami", "kubernetes-admin, system:masters"],
    [`kubectl get pods -n ${ns} --as=jane`, "allowed by the RoleBinding"],
    [`kubectl delete pod web -n ${ns} --as=jane`, "403 Forbidden"],
    [`kubectl auth can-i --list -n ${ns} --as=jane`],
    [`kubectl --kubeconfig=${janeKubeconfigPath} get pods`, "jane's own token"],
    [`kubectl --kubeconfig=${janeKubeconfigPath} auth can-i create pods`, "no"],
    [`kubectl get pod web -n ${ns} --show-labels`, "injected-by=label-injector"],
    [`kubectl run web2 -n ${ns} --image=nginx`, "the webhook labels it too"],
    ["kubectl get mutatingwebhookconfigurations"],
    [`tail -f ${auditLog}`, "one JSON line per request stage"],
  ];
  suggest(commands);
}

runDemo(main);
