// Chapter 3's demo, run as a learner runs it (with --once, so it exits): the key lines of each
// step must appear, in order — anonymous allowed /version and refused pods with upstream's 403,
// a bad token 401, jane refused then allowed by a RoleBinding, can-i answers, impersonation
// allowed for the admin and refused for jane, the webhook's label on the stored pod, PodSecurity's
// and ResourceQuota's refusals, and the audit events of one request. Then the kubeconfigs it
// writes (the admin's certificate, jane's token), the PKI it keeps, and Ctrl-C: both servers
// stopped, the files kept.
import { execFile } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse as parseYAML } from "yaml";
import { describeWithTools } from "../../scripts/external-tools.ts";
import { lineOf, runDemoToEnd, startDemo } from "../demo-process.ts";

// The demo writes to .tmp/chapter-03 of the course; the tests move that (CHAPTER_TMP) to a
// directory of their own, so that they never rewrite the kubeconfig or PKI of a learner's demo.
// One directory for every run here: the PKI (RSA keys, slow to make) is made once and kept.
const workDir = mkdtempSync(join(tmpdir(), "chapter-03-"));
afterAll(() => rmSync(workDir, { recursive: true, force: true }));
const kubeconfigPath = join(workDir, "kubeconfig");
const auditLog = join(workDir, "audit.log");
// No kubectl for the tour: the test checks the tour, not kubectl (which may be missing or slow).
const withoutKubectl = { PATH: "/nonexistent", CHAPTER_TMP: workDir };

describe("npm run chapter -- 3 --once", () => {
  let out: { code: number | null; stdout: string; stderr: string };
  let lines: string[];

  beforeAll(async () => {
    out = await runDemoToEnd("03-api-security", ["--once"], withoutKubectl, 85_000);
    lines = out.stdout.split("\n");
  }, 90_000);

  it("runs every step and exits 0", () => {
    expect(out.code, out.stderr + out.stdout.slice(-2000)).toBe(0);
    for (const n of [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]) expect(out.stdout).toMatch(new RegExp(`^${n}\\. `, "m"));
    expect(out.stdout).not.toMatch(/absent!|got no AdmissionReview/);
    expect(out.stdout).toMatch(/made \d+ files in .*pki/);
    expect(out.stdout).toMatch(/Serving securely on 127\.0\.0\.1:\d+/);
  });

  it("lets anonymous read /version, refuses its pod list with upstream's 403, and a bad token 401", () => {
    const version = lineOf(lines, /anonymous: GET \/version$/);
    expect(lines[version + 1], out.stdout).toMatch(/← 200 OK, gitVersion v1\.32\.0/);
    const pods = lineOf(lines, /anonymous: GET \/api\/v1\/namespaces\/default\/pods$/, version);
    expect(lines[pods + 1], out.stdout).toContain(
      '← 403 Forbidden: pods is forbidden: User "system:anonymous" cannot list resource "pods" in API group "" in the namespace "default"',
    );
    const bad = lineOf(lines, /a wrong token: GET \/version$/, pods);
    expect(lines[bad + 1], out.stdout).toContain("← 401 Unauthorized: Unauthorized");
  });

  it("refuses jane until a RoleBinding grants her the pods, then allows the same request", () => {
    expect(out.stdout).toContain('username jane, uid 1001, groups ["developers","system:authenticated"]');
    const denied = lineOf(
      lines,
      /← 403 Forbidden: pods is forbidden: User "jane" cannot list resource "pods" in API group "" in the namespace "demo"$/,
    );
    const bound = lineOf(lines, /RoleBinding demo\/jane-reads-pods → User jane/, denied);
    const allowed = lineOf(lines, /← 200 OK, 0 pods/, bound);
    expect(
      [denied, bound, allowed].every((i) => i > 0),
      out.stdout,
    ).toBe(true);
    expect(lines[allowed - 1]).toContain("jane: GET /api/v1/namespaces/demo/pods");
  });

  it("answers can-i from the same authorizer", () => {
    expect(out.stdout).toMatch(
      /jane: can-i list pods -n demo → yes \(RBAC: allowed by RoleBinding "jane-reads-pods\/demo" of Role "pod-reader" to User "jane"\)/,
    );
    expect(out.stdout).toMatch(/jane: can-i delete pods -n demo → no$/m);
    expect(out.stdout).toMatch(/jane: can-i list secrets -n demo → no$/m);
    expect(out.stdout).toMatch(/jane: can-i get pods -n kube-system → no$/m);
  });

  it("lets the admin act as jane, and only as jane; refuses jane acting as the admin", () => {
    expect(out.stdout).toContain('← username jane, groups ["system:authenticated"]');
    const list = lineOf(lines, /admin --as=jane: GET \/api\/v1\/namespaces\/demo\/pods$/);
    expect(lines[list + 1], out.stdout).toContain("← 200 OK");
    expect(out.stdout).toContain(
      '← 403 Forbidden: pods "anything" is forbidden: User "jane" cannot delete resource "pods" in API group "" in the namespace "demo"',
    );
    expect(out.stdout).toContain(
      '← 403 Forbidden: users "kubernetes-admin" is forbidden: User "jane" cannot impersonate resource "users" in API group "" at the cluster scope',
    );
  });

  it("calls the mutating webhook over HTTPS and stores the label it patched in", () => {
    const sent = lineOf(lines, /admin: POST \/api\/v1\/namespaces\/demo\/pods \{pod web/);
    expect(lines[sent + 1], out.stdout).toContain(
      "webhook got an AdmissionReview: CREATE pods demo/web by kubernetes-admin",
    );
    expect(lines[sent + 2]).toContain('← 201 Created, labels {"app":"web","injected-by":"label-injector"}');
    expect(out.stdout).toContain("GET /api/v1/namespaces/demo/pods/web → label injected-by=label-injector");
    expect(out.stdout).toMatch(/serviceAccountName=default, 2 tolerations/);
  });

  it("refuses a privileged pod in a baseline namespace, and the pod beyond the quota, in upstream's words", () => {
    expect(out.stdout).toContain(
      '← 403 Forbidden: pods "root" is forbidden: violates PodSecurity "baseline:latest": privileged (container "app" must not set securityContext.privileged=true)',
    );
    const first = lineOf(lines, /admin: POST \/api\/v1\/namespaces\/locked\/pods \{pod first\}/);
    expect(lines[first + 1], out.stdout).toContain("← 201 Created");
    expect(lines[first + 3]).toContain(
      '← 403 Forbidden: pods "second" is forbidden: exceeded quota: one-pod, requested: pods=1, used: pods=1, limited: pods=1',
    );
    expect(out.stdout).toContain("the quota's status: used pods=1, hard pods=1");
  });

  it("shows the audit events of jane's allowed list, stage by stage, with the decision", () => {
    const received = lineOf(
      lines,
      /^ +RequestReceived +\S+ list \/api\/v1\/namespaces\/demo\/pods user=jane/,
    );
    const complete = lineOf(
      lines,
      /^ +ResponseComplete +\S+ list \/api\/v1\/namespaces\/demo\/pods user=jane .* → 200$/,
      received,
    );
    expect(received, out.stdout).toBeGreaterThan(0);
    expect(complete, out.stdout).toBe(received + 1);
    expect(lines[complete + 1]).toMatch(/authorization\.k8s\.io\/decision: allow/);
    expect(lines[complete + 2]).toContain(
      'authorization.k8s.io/reason: RBAC: allowed by RoleBinding "jane-reads-pods/demo" of Role "pod-reader" to User "jane"',
    );
    // The log itself: one JSON line per stage, Metadata level, no body.
    const id = /Audit-ID (\S+) /.exec(out.stdout)?.[1];
    const events = readFileSync(auditLog, "utf8")
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l))
      .filter((e) => e.auditID === id);
    expect(events.map((e) => e.stage)).toEqual(["RequestReceived", "ResponseComplete"]);
    for (const e of events) {
      expect(e).toMatchObject({ kind: "Event", apiVersion: "audit.k8s.io/v1", level: "Metadata" });
      expect(e.responseObject).toBeUndefined();
    }
  });

  it("writes an admin kubeconfig for this run's port, and prints the export line", () => {
    expect(out.stdout).toContain(`kubeconfig written to ${kubeconfigPath}`);
    expect(out.stdout).toMatch(new RegExp(`^ +export KUBECONFIG=${kubeconfigPath}$`, "m"));
    const kubeconfig = parseYAML(readFileSync(kubeconfigPath, "utf8"));
    expect(kubeconfig).toMatchObject({ kind: "Config", "current-context": "kubernetes-admin@kubernetes" });
    const port = /Serving securely on 127\.0\.0\.1:(\d+)/.exec(out.stdout)?.[1];
    expect(kubeconfig.clusters[0].cluster.server).toBe(`https://127.0.0.1:${port}`);
    expect(kubeconfig.users[0].user["client-certificate-data"]).toBeTruthy();
    expect(out.stdout).toMatch(/kubectl is not installed/);
  });

  it("stops both servers when it is done, and says what stays", () => {
    const stopped = lineOf(lines, /stopped the API server and the webhook: every object was in memory/);
    expect(stopped, out.stdout).toBeGreaterThan(0);
    expect(lines[stopped + 1]).toContain(`kept (git-ignored, for the next run): ${kubeconfigPath}`);
  });

  it("refuses a flag it does not know, in one line", async () => {
    const bad = await runDemoToEnd("03-api-security", ["--bogus"], withoutKubectl);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toBe(
      "npm run chapter -- 3: unknown flag: --bogus (see npm run chapter -- 3 --help)\n",
    );
    expect(bad.stdout).toBe("");
  });
});

describe("npm run chapter -- 3, serving kubectl until Ctrl-C", () => {
  it("serves the admin's kubeconfig, then on Ctrl-C stops and exits 0", async () => {
    const demo = startDemo("03-api-security", [], withoutKubectl);
    try {
      await demo.waitForStdout("Serving until Ctrl-C", 90_000);
      // After the --once run above, the PKI is found and kept (alone, this run makes it).
      expect(demo.stdout()).toMatch(/(kept all|made) \d+ files in .*pki/);
      // The admin's certificate from the kubeconfig, over HTTPS, trusting the cluster CA.
      const kubeconfig = parseYAML(readFileSync(kubeconfigPath, "utf8"));
      const b64 = (s: string) => Buffer.from(s, "base64").toString();
      const { request } = await import("node:https");
      const whoami = await new Promise<string>((resolve, reject) => {
        const req = request(
          `${kubeconfig.clusters[0].cluster.server}/apis/authentication.k8s.io/v1/selfsubjectreviews`,
          {
            method: "POST",
            ca: b64(kubeconfig.clusters[0].cluster["certificate-authority-data"]),
            cert: b64(kubeconfig.users[0].user["client-certificate-data"]),
            key: b64(kubeconfig.users[0].user["client-key-data"]),
            agent: false,
            headers: { "Content-Type": "application/json" },
          },
          (res) => {
            let text = "";
            res.on("data", (d) => {
              text += d;
            });
            res.on("end", () => resolve(text));
          },
        );
        req.on("error", reject);
        req.end(JSON.stringify({ apiVersion: "authentication.k8s.io/v1", kind: "SelfSubjectReview" }));
      });
      expect(JSON.parse(whoami).status.userInfo.username).toBe("kubernetes-admin");

      demo.child.kill("SIGINT");
      expect(await demo.waitForExit()).toBe(0);
      expect(demo.stdout()).toContain("stopped the API server and the webhook");
      expect(demo.stderr()).not.toContain("the demo failed");
      expect(existsSync(kubeconfigPath) && existsSync(join(workDir, "pki", "ca.crt"))).toBe(true);
    } finally {
      demo.kill();
    }
  }, 120_000);

  it("stops both servers on Ctrl-C in the middle of the tour too", async () => {
    const demo = startDemo("03-api-security", [], withoutKubectl);
    try {
      await demo.waitForStdout("4. jane", 90_000);
      demo.child.kill("SIGINT");
      expect(await demo.waitForExit()).toBe(0);
      expect(demo.stdout()).toContain("stopped the API server and the webhook");
      expect(demo.stderr()).not.toContain("the demo failed");
    } finally {
      demo.kill();
    }
  }, 120_000);
});

describeWithTools("npm run chapter -- 3 with the real kubectl", ["kubectl"], () => {
  const run = promisify(execFile);

  it("runs the commands it prints: whoami, --as=jane allowed and refused, the injected label, jane's own kubeconfig", async () => {
    const demo = startDemo("03-api-security", [], { CHAPTER_TMP: workDir });
    try {
      await demo.waitForStdout("Serving until Ctrl-C", 90_000);
      const env = { ...process.env, KUBECONFIG: kubeconfigPath, HOME: workDir };
      const who = await run("kubectl", ["auth", "whoami", "-o", "jsonpath={.status.userInfo.username}"], {
        env,
      });
      expect(who.stdout).toBe("kubernetes-admin");
      const asJane = await run("kubectl", ["get", "pods", "-n", "demo", "--as=jane", "-o", "name"], { env });
      expect(asJane.stdout).toBe("pod/web\n");
      const refused = await run("kubectl", ["delete", "pod", "web", "-n", "demo", "--as=jane"], {
        env,
      }).catch((e: { stderr: string }) => e);
      expect((refused as { stderr: string }).stderr).toContain(
        'User "jane" cannot delete resource "pods" in API group "" in the namespace "demo"',
      );
      const label = await run(
        "kubectl",
        ["get", "pod", "web", "-n", "demo", "-o", "jsonpath={.metadata.labels.injected-by}"],
        { env },
      );
      expect(label.stdout).toBe("label-injector");
      // jane's kubeconfig: her token, no certificate.
      const jane = join(workDir, "jane.kubeconfig");
      const own = await run(
        "kubectl",
        ["--kubeconfig", jane, "auth", "whoami", "-o", "jsonpath={.status.userInfo.username}"],
        { env },
      );
      expect(own.stdout).toBe("jane");
      const canI = await run("kubectl", ["--kubeconfig", jane, "auth", "can-i", "create", "pods"], {
        env,
      }).catch((e: { stdout: string }) => e);
      expect((canI as { stdout: string }).stdout).toBe("no\n");
      const web2 = await run("kubectl", ["run", "web2", "-n", "demo", "--image=nginx"], { env });
      expect(web2.stdout).toBe("pod/web2 created\n");
      demo.child.kill("SIGINT");
      expect(await demo.waitForExit()).toBe(0);
    } finally {
      demo.kill();
    }
  }, 120_000);
});
