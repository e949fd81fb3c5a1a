// Chapter 4's demo, run as a learner runs it (with --once, so it exits): the informer synced from
// a list, each write's event printed by the handler and its key synced by the worker; five quick
// updates of one pod giving five events but fewer syncs, the last one reading the newest labels;
// the lister answering from the cache; a deletion's event and a sync that finds the pod gone.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { lineOf, runDemoToEnd } from "../demo-process.ts";

const workDir = mkdtempSync(join(tmpdir(), "chapter-04-"));
afterAll(() => rmSync(workDir, { recursive: true, force: true }));

describe("npm run chapter -- 4 --once", () => {
  let out: { code: number | null; stdout: string; stderr: string };
  let lines: string[];

  beforeAll(async () => {
    out = await runDemoToEnd(
      "04-informers",
      ["--once"],
      { PATH: "/nonexistent", CHAPTER_TMP: workDir },
      55_000,
    );
    lines = out.stdout.split("\n");
  }, 60_000);

  it("runs every step and exits 0", () => {
    expect(out.code, out.stderr + out.stdout.slice(-2000)).toBe(0);
    for (const n of [1, 2, 3, 4, 5, 6, 7, 8]) expect(out.stdout).toMatch(new RegExp(`^${n}\\. `, "m"));
    expect(out.stdout).toMatch(/Serving securely on 127\.0\.0\.1:\d+/);
    expect(out.stdout).toMatch(/synced: the list returned resourceVersion \d+, 0 pods/);
  });

  it("prints each ADDED event, then the worker's sync of that key", () => {
    for (const name of ["web-1", "web-2", "web-3"]) {
      const added = lineOf(lines, new RegExp(`informer ADDED +demo/${name} rv \\d+`));
      lineOf(lines, new RegExp(`worker +sync +demo/${name} sees labels`), added);
    }
  });

  it("turns five updates into five events and fewer syncs, the last reading the newest state", () => {
    const m = /five updates → (\d+) events → (\d+) syncs? of demo\/web-1/.exec(out.stdout);
    expect(m, out.stdout).not.toBeNull();
    expect(Number(m![1])).toBe(5);
    // The worker is held on the first sync while the other four arrive: exactly one more follows.
    expect(Number(m![2])).toBe(2);
    const last = lineOf(lines, /informer MODIFIED demo\/web-1 .*"v":"6"/);
    lineOf(lines, /worker +sync +demo\/web-1 sees labels .*"v":"6"/, last);
  });

  it("lists from the cache and syncs a deleted pod as gone", () => {
    expect(out.stdout).toContain("lister: app=web in demo → web-1, web-2, web-3");
    const del = lineOf(lines, /informer DELETED +demo\/web-2/);
    lineOf(lines, /worker +sync +demo\/web-2 sees it gone/, del);
    expect(out.stdout).toMatch(/stopped the informer, the worker, the controller-manager and the API server/);
  });

  it("runs the ReplicaSet controller, which replaces a deleted pod", () => {
    expect(out.stdout).toContain(
      "started replicaset-controller, as the ServiceAccount kube-system/replicaset-controller",
    );
    const made =
      /ReplicaSet frontend \(replicas 3\) → pods (frontend-\w+), (frontend-\w+), (frontend-\w+)/.exec(
        out.stdout,
      );
    expect(made, out.stdout).not.toBeNull();
    expect(out.stdout).toContain(`deleted ${made![1]}`);
    const healed = /the controller saw 2 of 3 and created (frontend-\w+)/.exec(out.stdout);
    expect(healed, out.stdout).not.toBeNull();
    expect(made!.slice(1)).not.toContain(healed![1]);
  });
});
