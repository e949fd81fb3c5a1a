import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { listChapters, root } from "./course.ts";

const run = promisify(execFile);
const tsx = join(root, "node_modules", "tsx", "dist", "cli.mjs");

async function chapter(...args: string[]): Promise<{ code: number; out: string }> {
  try {
    const r = await run(process.execPath, [tsx, join(root, "scripts", "chapter.ts"), ...args], { cwd: root });
    return { code: 0, out: r.stdout + r.stderr };
  } catch (e) {
    const err = e as { code: number; stdout: string; stderr: string };
    return { code: err.code, out: err.stdout + err.stderr };
  }
}

describe("npm run chapter", () => {
  it("lists the chapters and exits 0 when no chapter is named", async () => {
    const { code, out } = await chapter();
    expect(code, out).toBe(0);
    expect(out).toMatch(/^\s+0\s+00-life-of-a-pod\s+The life of a pod$/m);
    for (const c of listChapters()) expect(out).toContain(c.title);
    expect(out).toContain("npm run chapter -- <number>");
  });

  it("answers an unknown chapter with one line that says what to do, and exit 2", async () => {
    const { code, out } = await chapter("42");
    expect(code).toBe(2);
    expect(out.trim()).toMatch(/^no chapter "42" — the chapters are 0 to \d+; `npm run chapter` lists them$/);
    const typo = await chapter("etcd-wach");
    expect(typo.code).toBe(2);
    expect(typo.out.trim()).toMatch(/^no chapter "etcd-wach" — did you mean etcd-watch\? [^\n]*$/);
  });

  it("runs chapter 0 by number, padded number or slug: the tour, a watch on the wire, selectors, the setup check", async () => {
    for (const q of ["0", "00", "life-of-a-pod"]) {
      const { code, out } = await chapter(q);
      expect(code, out.slice(-2000)).toBe(0);
      expect(out).toContain("The life of a pod");
      expect(out).toMatch(/ADDED\s+web/);
      expect(out).toMatch(/410 Gone, reason Expired: too old resource version/);
      expect(out).toMatch(/✓ web-2\s+app=web,env=staging/);
      expect(out).toMatch(/✓ node\s+v\d+/);
    }
  }, 60_000);
});
