import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { listChapters, listExercises, root } from "./course.ts";

const run = promisify(execFile);
const tsx = join(root, "node_modules", "tsx", "dist", "cli.mjs");
// The hints seen are kept in the grade folder: the test uses its own, not the learner's.
const gradeDir = mkdtempSync(join(tmpdir(), "hint-test-"));
afterAll(() => rmSync(gradeDir, { recursive: true, force: true }));

async function hint(...args: string[]): Promise<{ code: number; out: string }> {
  try {
    const r = await run(process.execPath, [tsx, join(root, "scripts", "hint.ts"), ...args], {
      cwd: root,
      env: { ...process.env, COURSE_GRADE_DIR: gradeDir },
    });
    return { code: 0, out: r.stdout + r.stderr };
  } catch (e) {
    const err = e as { code: number; stdout: string; stderr: string };
    return { code: err.code, out: err.stdout + err.stderr };
  }
}

describe("npm run hint", () => {
  it("lists every exercise — id, chapter and title — and exits 0 when none is named", async () => {
    const { code, out } = await hint();
    expect(code, out).toBe(0);
    for (const c of listChapters().filter((c) => listExercises().some((e) => e.chapter === c.dir))) {
      expect(out).toMatch(
        new RegExp(`^Chapter ${c.number}  ${c.title.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}$`, "m"),
      );
    }
    for (const ex of listExercises()) {
      expect(out).toMatch(
        new RegExp(
          `^\\s+${ex.chapterNumber}\\.${ex.number}\\s+${ex.id}\\s+.*${ex.title.slice(0, 20).replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}`,
          "m",
        ),
      );
    }
  });

  it("answers an unknown exercise with one line that says what to do, and exit 2", async () => {
    const { code, out } = await hint("no-such-exercise");
    expect(code).toBe(2);
    expect(out.trim()).toMatch(/^no exercise "no-such-exercise" — `npm run hint` lists them$/);
    const typo = await hint("prefix-ned");
    expect(typo.out.trim()).toMatch(/^no exercise "prefix-ned" — did you mean prefix-end\? [^\n]*$/);
  });

  it("shows one more hint each time, and after the last offers no next one", async () => {
    const ex = listExercises().find((e) => e.id === "prefix-end")!;
    const n = ex.hints.length;
    for (let i = 1; i <= n + 1; i++) {
      const { code, out } = await hint(ex.id);
      expect(code).toBe(0);
      expect(out).toContain(`Hint ${Math.min(i, n)}/${n}`);
      if (i < n) expect(out).toContain(`run it again for hint ${i + 1}`);
      else {
        expect(out).not.toMatch(/run it again|next hint/);
        expect(out).toMatch(i === n ? /That was the last hint/ : /You have seen all \d+ hints/);
        expect(out).toContain(ex.solutionDir);
      }
    }
    expect((await hint(ex.id, "--reset")).out).toContain("start again from hint 1");
    expect((await hint(ex.id)).out).toContain(`Hint 1/${n}`);
  }, 60_000);
});
