// Chapter 2's demo, run as a learner runs it (with --once, so it exits): the key lines of each
// step must appear, in order — the kubelet's watch silent until the binding and then ADDED, a
// stale update refused with 409, list pages read at one revision, 410 after compaction and from
// a watch older than the watch cache, and a Table for kubectl.
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { beforeAll, describe, expect, it } from "vitest";

const root = fileURLToPath(new URL("../../", import.meta.url));

function runDemo(): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(
      process.execPath,
      ["node_modules/tsx/dist/cli.mjs", "chapters/02-apiserver/run.ts", "--once"],
      {
        cwd: root,
        // No kubectl here: the test checks the tour, not kubectl (which may be missing or slow).
        env: { ...process.env, NO_COLOR: "1", PATH: "/nonexistent" },
      },
    );
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => {
      stdout += d;
    });
    child.stderr.on("data", (d) => {
      stderr += d;
    });
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

/** The position of the first line matching `re`, or -1. */
function lineOf(lines: string[], re: RegExp, from = 0): number {
  for (let i = from; i < lines.length; i++) if (re.test(lines[i])) return i;
  return -1;
}

describe("npm run chapter -- 2 --once", () => {
  let out: { code: number | null; stdout: string; stderr: string };
  let lines: string[];

  beforeAll(async () => {
    out = await runDemo();
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
    expect(out.stdout).toMatch(/merge-patch\+json → 422 Invalid: .*may not add or remove containers/);
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
      `resourceVersion=${rv}&resourceVersionMatch=Exact → 410 Expired: The resourceVersion for the provided list is too old.`,
    );
    expect(out.stdout).toMatch(/rv \d+> → 410 Expired: The provided continue parameter is too old/);
    expect(out.stdout).toMatch(/fresh token: \{"v":"meta.k8s.io\/v1","rv":-1,"start":"db\\u0000"\}/);
  });

  it("answers a watch older than the watch cache's window with an ERROR event carrying 410", () => {
    expect(out.stdout).toMatch(/watch from rv=\d+ → MODIFIED configmap demo\/counter/);
    const from = /configmap counter created at rv=(\d+)/.exec(out.stdout)?.[1];
    expect(from, out.stdout).toBeDefined();
    expect(out.stdout).toContain(`watch from rv=${from} → HTTP 200, then:`);
    expect(out.stdout).toMatch(
      new RegExp(`ERROR +410 Expired: too old resource version: ${from} \\(\\d+\\)`),
    );
    expect(out.stdout).toMatch(/and the response ends \(end of stream\)/);
  });

  it("prints pods as a Table and writes a kubeconfig", () => {
    expect(out.stdout).toMatch(/kind Table, columns: Name Ready Status Restarts Age IP Node/);
    expect(out.stdout).toMatch(/^ +api +0\/2 +Pending +0 /m);
    expect(out.stdout).toMatch(/kubeconfig written to \S+kubeconfig/);
    expect(out.stdout).toMatch(/kubectl is not installed/);
  });
});
