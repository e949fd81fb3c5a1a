// Chapter 2's demo, run as a learner runs it (with --once, so it exits): the key lines of each
// step must appear, in order — the kubelet's watch silent until the binding and then ADDED, a
// stale update refused with 409, list pages read at one revision, 410 after compaction and from
// a watch older than the watch cache, and a Table for kubectl. Then the files it writes for
// kubectl, and Ctrl-C: both servers stopped, the files kept.
import { execFile } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse as parseYAML } from "yaml";
import { describeWithTools } from "../../scripts/external-tools.ts";
import { lineOf, runDemoToEnd, startDemo } from "../demo-process.ts";

// The demo writes to .tmp/chapter-02 of the course; the tests move that (CHAPTER_TMP) to a
// directory of their own, so that they never rewrite the kubeconfig of a demo the learner runs.
const workDir = mkdtempSync(join(tmpdir(), "chapter-02-"));
afterAll(() => rmSync(workDir, { recursive: true, force: true }));
const kubeconfigPath = join(workDir, "kubeconfig");
const podManifestPath = join(workDir, "my-pod.yaml");
// No kubectl for the tour: the test checks the tour, not kubectl (which may be missing or slow).
const withoutKubectl = { PATH: "/nonexistent", CHAPTER_TMP: workDir };

/** The API server's URL, as the kubeconfig the demo wrote names it. */
function serverOf(kubeconfig: string): string {
  const m = /server: (http:\/\/\S+)/.exec(kubeconfig);
  if (!m) throw new Error(`no server in the kubeconfig:\n${kubeconfig}`);
  return m[1];
}

describe("npm run chapter -- 2 --once", () => {
  let out: { code: number | null; stdout: string; stderr: string };
  let lines: string[];

  beforeAll(async () => {
    out = await runDemoToEnd("02-apiserver", ["--once"], withoutKubectl, 85_000);
    lines = out.stdout.split("\n");
  }, 90_000);

  it("runs every step and exits 0", () => {
    expect(out.code, out.stderr + out.stdout.slice(-2000)).toBe(0);
    for (const n of [1, 2, 3, 4, 5, 6, 7, 8, 9]) expect(out.stdout).toMatch(new RegExp(`^${n}\\. `, "m"));
    expect(out.stdout).not.toMatch(/nothing$|an event\?!|≠ the pod's resourceVersion|still open/m);
  });

  it("stores the pod with defaults, its resourceVersion being the key's mod_revision", () => {
    expect(out.stdout).toMatch(
      /restartPolicy=Always, terminationGracePeriodSeconds=30, schedulerName=default-scheduler/,
    );
    const created = /pod web uid=\S+ rv=(\d+)/.exec(out.stdout);
    expect(created, out.stdout).not.toBeNull();
    expect(out.stdout).toContain(`mod_revision=${created?.[1]} = the pod's resourceVersion`);
    expect(out.stdout).toMatch(/the stored JSON has no resourceVersion \(absent\)/);
  });

  it("tells the kubelet about the pod only once it is bound, by a chunked watch", () => {
    expect(out.stdout).toMatch(/Transfer-Encoding: chunked/);
    const initial = lineOf(lines, /everything watch: ADDED +pod demo\/web/);
    const silent = lineOf(lines, /kubelet watch: +nothing for 500 ms/, initial);
    const binding = lineOf(lines, /binding \{target: node-1\} → 201 Success/, silent);
    const added = lineOf(lines, /kubelet watch: +ADDED +pod demo\/web rv=\d+ nodeName=node-1/, binding);
    const modified = lineOf(lines, /everything watch: MODIFIED pod demo\/web rv=\d+ nodeName=node-1/, added);
    expect(
      [initial, silent, binding, added, modified].every((i) => i >= 0),
      out.stdout,
    ).toBe(true);
    expect(lines[added + 1]).toMatch(/\{"type":"ADDED","object":\{"apiVersion":"v1","kind":"Pod"/);
    const rv = /rv=(\d+)/.exec(lines[added])?.[1];
    expect(out.stdout).toContain(
      `the event's resourceVersion ${rv} is the binding's etcd revision (mod_revision ${rv})`,
    );
    const graceful = lineOf(
      lines,
      /kubelet watch: +MODIFIED pod demo\/web .*deletionTimestamp set, grace 30s/,
      modified,
    );
    const deleted = lineOf(lines, /kubelet watch: +DELETED +pod demo\/web/, graceful);
    expect(graceful, out.stdout).toBeGreaterThan(0);
    expect(deleted, out.stdout).toBeGreaterThan(graceful);
  });

  it("refuses an update with a stale resourceVersion with 409, and a re-read retry succeeds", () => {
    expect(out.stdout).toMatch(
      /client B: PUT db \(rv=(\d+), \+label owner\) → 409 Conflict: Operation cannot be fulfilled on pods "db": the object has been modified; please apply your changes to the latest version and try again/,
    );
    expect(out.stdout).toMatch(
      /client B, retry: .* → 200, labels \{"app":"db","tier":"backend","owner":"team-b"\}/,
    );
  });

  it("merges containers by name for a strategic merge patch, not for a merge patch", () => {
    expect(out.stdout).toMatch(/strategic-merge-patch\+json → 200: app=nginx:1\.28, sidecar=busybox:1\.36/);
    expect(out.stdout).toMatch(
      /merge-patch\+json → 422 Unprocessable Entity, reason Invalid: .*may not add or remove containers/,
    );
  });

  it("reads every page of a list at the first page's revision, until compaction: 410", () => {
    const first = /\?limit=2 → api, cache; rv=(\d+), remainingItemCount=2/.exec(out.stdout);
    expect(first, out.stdout).not.toBeNull();
    const rv = first?.[1];
    expect(out.stdout).toContain(
      `continue token decodes to {"v":"meta.k8s.io/v1","rv":${rv},"start":"cache\\u0000"}`,
    );
    expect(out.stdout).toContain(`continue=… → db; rv=${rv} (the first page's revision`);
    expect(out.stdout).toContain(
      `resourceVersion=${rv}&resourceVersionMatch=Exact → 410 Gone, reason Expired: The resourceVersion for the provided list is too old.`,
    );
    expect(out.stdout).toMatch(
      /rv \d+> → 410 Gone, reason Expired: The provided continue parameter is too old/,
    );
    expect(out.stdout).toMatch(/fresh token: \{"v":"meta.k8s.io\/v1","rv":-1,"start":"db\\u0000"\}/);
  });

  it("answers a watch older than the watch cache's window with an ERROR event carrying 410", () => {
    expect(out.stdout).toMatch(/watch from rv=\d+ → MODIFIED configmap demo\/counter/);
    const from = /configmap counter created at rv=(\d+)/.exec(out.stdout)?.[1];
    expect(from, out.stdout).toBeDefined();
    expect(out.stdout).toContain(`watch from rv=${from} → HTTP 200, then:`);
    expect(out.stdout).toMatch(
      new RegExp(`ERROR +410 Gone, reason Expired: too old resource version: ${from} \\(\\d+\\)`),
    );
    expect(out.stdout).toMatch(/and the response ends \(end of stream\)/);
  });

  it("prints pods as a Table", () => {
    expect(out.stdout).toMatch(/kind Table, columns: Name Ready Status Restarts Age IP Node/);
    expect(out.stdout).toMatch(/^ +api +0\/2 +Pending +0 /m);
  });

  it("says what is true of kubectl and the server's version, not what one vendor's wrapper does", () => {
    expect(out.stdout).toMatch(/GET \/version → gitVersion v1\.32\.0 \(major 1, minor 32\)/);
    expect(out.stdout).toContain("kubectl is supported against a server one minor version older or newer");
    expect(out.stdout).toContain("`kubectl version` prints both versions");
    expect(out.stdout).not.toMatch(/picks its binary/);
  });

  it("writes the kubeconfig and the manifest it names to stable paths, and prints the export line", () => {
    expect(out.stdout).toContain(`kubeconfig written to ${kubeconfigPath}`);
    expect(out.stdout).toMatch(new RegExp(`^ +export KUBECONFIG=${kubeconfigPath}$`, "m"));
    expect(out.stdout).toMatch(new RegExp(`^ +kubectl apply --server-side -f ${podManifestPath}$`, "m"));
    // Every file the commands name exists, and says what they need.
    const kubeconfig = parseYAML(readFileSync(kubeconfigPath, "utf8"));
    expect(kubeconfig).toMatchObject({ kind: "Config", "current-context": "course" });
    expect(kubeconfig.contexts[0].context.namespace).toBe("demo");
    const pod = parseYAML(readFileSync(podManifestPath, "utf8"));
    expect(pod).toMatchObject({ apiVersion: "v1", kind: "Pod", metadata: { name: "my-pod" } });
    expect(out.stdout).toMatch(/kubectl is not installed/);
  });

  it("stops both servers when it is done, and says what stays", () => {
    const stopped = lineOf(lines, /stopped the API server and etcd: every object was in memory, and is gone/);
    expect(stopped, out.stdout).toBeGreaterThan(0);
    expect(lines[stopped + 1]).toContain(
      `kept (git-ignored, for the next run): ${kubeconfigPath}, ${podManifestPath}`,
    );
  });

  it("refuses a flag it does not know, in one line", async () => {
    const bad = await runDemoToEnd("02-apiserver", ["--bogus"], withoutKubectl);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toBe(
      "npm run chapter -- 2: unknown flag: --bogus (see npm run chapter -- 2 --help)\n",
    );
    expect(bad.stdout).toBe("");
  });
});

describe("npm run chapter -- 2, serving kubectl until Ctrl-C", () => {
  it("serves what its commands name, then on Ctrl-C stops both servers, keeps the two files, exits 0", async () => {
    const demo = startDemo("02-apiserver", [], withoutKubectl);
    try {
      await demo.waitForStdout("Serving until Ctrl-C", 90_000);
      const api = serverOf(readFileSync(kubeconfigPath, "utf8"));
      // `kubectl apply --server-side -f my-pod.yaml` is this request (kubectl 1.32's, less its headers).
      const applied = await fetch(
        `${api}/api/v1/namespaces/demo/pods/my-pod?fieldManager=kubectl&fieldValidation=Strict&force=false`,
        {
          method: "PATCH",
          headers: { "Content-Type": "application/apply-patch+yaml", Accept: "application/json" },
          body: readFileSync(podManifestPath, "utf8"),
        },
      );
      expect(applied.status, await applied.clone().text()).toBe(201);
      expect((await applied.json()).metadata.managedFields[0]).toMatchObject({
        manager: "kubectl",
        operation: "Apply",
      });

      demo.child.kill("SIGINT");
      expect(await demo.waitForExit()).toBe(0);
      // Printed once both servers' close() has returned, before the demo exits.
      expect(demo.stdout()).toContain("stopped the API server and etcd");
      expect(demo.stderr()).not.toContain("the demo failed");
      expect(existsSync(kubeconfigPath) && existsSync(podManifestPath)).toBe(true);
    } finally {
      demo.kill();
    }
  }, 120_000);

  it("stops both servers on Ctrl-C in the middle of the tour too", async () => {
    const demo = startDemo("02-apiserver", [], withoutKubectl);
    try {
      await demo.waitForStdout("3. The kubelet's watch", 90_000);
      demo.child.kill("SIGINT");
      expect(await demo.waitForExit()).toBe(0);
      expect(demo.stdout()).toContain("stopped the API server and etcd");
      expect(demo.stderr()).not.toContain("the demo failed");
    } finally {
      demo.kill();
    }
  }, 120_000);
});

describeWithTools("npm run chapter -- 2 with the real kubectl", ["kubectl"], () => {
  const run = promisify(execFile);

  it("runs the commands it prints: apply --server-side -f the manifest it wrote, version, get", async () => {
    const demo = startDemo("02-apiserver", [], { CHAPTER_TMP: workDir });
    try {
      await demo.waitForStdout("Serving until Ctrl-C", 90_000);
      const env = { ...process.env, KUBECONFIG: kubeconfigPath };
      const apply = await run("kubectl", ["apply", "--server-side", "-f", podManifestPath], { env });
      expect(apply.stdout).toBe("pod/my-pod serverside-applied\n");
      const version = await run("kubectl", ["version"], { env });
      expect(version.stdout).toMatch(/^Server Version: v1\.32\.0$/m);
      const get = await run(
        "kubectl",
        ["get", "pod", "my-pod", "-o", "jsonpath={.spec.containers[0].image}"],
        { env },
      );
      expect(get.stdout).toBe("nginx:1.27");
      demo.child.kill("SIGINT");
      expect(await demo.waitForExit()).toBe(0);
    } finally {
      demo.kill();
    }
  }, 120_000);
});
