import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import {
  closest,
  findChapter,
  findExercise,
  firstHeading,
  listChapters,
  listExercises,
  listMistakes,
  parseHints,
} from "./course.ts";

const base = mkdtempSync(join(tmpdir(), "course-"));
afterAll(() => rmSync(base, { recursive: true, force: true }));

function write(rel: string, text: string) {
  mkdirSync(join(base, rel, ".."), { recursive: true });
  writeFileSync(join(base, rel), text);
}

write("chapters/00-intro/index.md", "---\ntitle: x\n---\n```md\n# not this\n```\n# Intro\n");
write("chapters/01-etcd-watch/index.md", "# etcd: MVCC and watch\n");
write("chapters/02-draft/notes.md", "no index.md: not a chapter\n");
write(
  "exercises/01-etcd-watch/02-prefix-end/README.md",
  "# Prefix end\n\nTask.\n\n## Hints\n\n<details><summary>Hint 1: bytes</summary>\n\nIncrement.\n</details>\n<details>\n<summary>Hint 2</summary>\nCarry.\n</details>\n",
);
write("exercises/01-etcd-watch/02-prefix-end/prefix.ts", "export {}\n");
write("exercises/01-etcd-watch/02-prefix-end/prefix.test.ts", "");
write("exercises/01-etcd-watch/03-two-files/a.ts", "");
write("exercises/01-etcd-watch/03-two-files/b.ts", "");
write("solutions/01-etcd-watch/02-prefix-end/wrong-carry.ts", "// Mistake: forgets the carry\n");
write("solutions/01-etcd-watch/03-two-files/wrong-x.ts", "// Mistake: x\n// @replaces b.ts\n");

describe("the course is read from its folders", () => {
  it("lists chapters with a numbered folder and an index.md, titled by the first heading", () => {
    const chapters = listChapters(base);
    expect(chapters.map((c) => [c.number, c.dir, c.title])).toEqual([
      [0, "00-intro", "Intro"],
      [1, "01-etcd-watch", "etcd: MVCC and watch"],
    ]);
  });

  it("finds a chapter by number, padded number, folder or slug", () => {
    const chapters = listChapters(base);
    for (const q of ["1", "01", "01-etcd-watch", "etcd-watch"])
      expect(findChapter(chapters, q)?.number).toBe(1);
    expect(findChapter(chapters, "7")).toBeUndefined();
    expect(findChapter(chapters, "nope")).toBeUndefined();
  });

  it("lists exercises with id, stubs, tests and hints", () => {
    const [ex] = listExercises(base);
    expect(ex).toMatchObject({
      id: "prefix-end",
      chapter: "01-etcd-watch",
      chapterNumber: 1,
      number: 2,
      title: "Prefix end",
      stubs: ["prefix.ts"],
      tests: ["prefix.test.ts"],
    });
    expect(ex.hints).toEqual(["bytes\n\nIncrement.", "Carry."]);
  });

  it("finds an exercise by id, folder, chapter/folder or chapter.number", () => {
    const all = listExercises(base);
    for (const q of [
      "prefix-end",
      "02-prefix-end",
      "01-etcd-watch/02-prefix-end",
      "exercises/01-etcd-watch/02-prefix-end/",
      "1.2",
    ]) {
      expect(findExercise(all, q)?.id).toBe("prefix-end");
    }
    expect(findExercise(all, "1.9")).toBeUndefined();
  });

  it("knows which stub a recorded mistake replaces", () => {
    const [one, two] = listExercises(base);
    expect(listMistakes(one, base)).toEqual([{ file: "wrong-carry.ts", replaces: "prefix.ts" }]);
    expect(listMistakes(two, base)).toEqual([{ file: "wrong-x.ts", replaces: "b.ts" }]);
  });

  it("reads no hints without a Hints heading, and the first heading outside fences", () => {
    expect(parseHints("# T\n<details><summary>a</summary>b</details>")).toEqual([]);
    expect(firstHeading("```\n# code\n```\ntext\n# Real")).toBe("Real");
    expect(firstHeading("no heading")).toBeUndefined();
  });
});

describe("a mistyped name", () => {
  const names = [
    "label-selectors",
    "prefix-end",
    "txn-compare",
    "etcd-watch",
    "watch-filter",
    "watch-cache-ring",
  ];
  it("finds the name a learner probably meant, or none", () => {
    expect(closest("lable-selectors", names)).toBe("label-selectors");
    expect(closest("prefix-ned", names)).toBe("prefix-end");
    expect(closest("selectors", names)).toBe("label-selectors");
    expect(closest("etcd", names)).toBe("etcd-watch");
    // "watch" is part of three names: no guess.
    expect(closest("watch", names)).toBeUndefined();
    expect(closest("kubelet", names)).toBeUndefined();
  });
});
