// Every exercise proves itself honest, with no list to edit: the reference solution passes every
// test, the untouched stub fails at least one test in every test file, and every recorded mistake
// (solutions/…/wrong-*.ts) fails at least one test. One vitest process runs all the variants.
// COURSE_EXERCISES=<id or chapter folder>[,…] proves only those (`-t` filters the tests, not the
// variants the beforeAll runs): `COURSE_EXERCISES=08-cluster npx vitest run scripts/exercise-integrity.test.ts`.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { listExercises, listMistakes, root } from "./course.ts";
import { integrityVariants, runVariants, summarize, type Variant } from "./variants.ts";
import type { FileRecord } from "./variants-reporter.ts";

const only = process.env.COURSE_EXERCISES?.split(",").filter(Boolean);
const exercises = listExercises().filter((e) => !only || only.includes(e.id) || only.includes(e.chapter));
const variants: Variant[] = exercises.flatMap((ex) => integrityVariants(ex));
let records: FileRecord[] = [];

beforeAll(async () => {
  if (variants.length > 0) records = await runVariants(variants, { label: "integrity" });
}, 900_000);

const result = (name: string) => summarize(records, variants.find((v) => v.name === name)!);
const describeFailure = (name: string) => {
  const r = result(name);
  return `${name}: ${r.passed} passed, ${r.failed} failed${r.firstFailure ? `; first failure: ${r.firstFailure.test}: ${r.firstFailure.error}` : ""}`;
};

it("the course has exercises, with unique ids", () => {
  expect(exercises.length).toBeGreaterThan(0);
  const ids = exercises.map((e) => e.id);
  expect(ids.filter((id, i) => ids.indexOf(id) !== i)).toEqual([]);
});

describe.each(exercises)("exercise $id ($dir)", (ex) => {
  it("has a README with a title, a link to its chapter and at least two hints", () => {
    const readme = join(root, ex.dir, "README.md");
    expect(existsSync(readme)).toBe(true);
    expect(readFileSync(readme, "utf8")).toMatch(/^# \S/m);
    expect(readFileSync(readme, "utf8")).toContain(`/chapters/${ex.chapter}/`);
    expect(ex.hints.length).toBeGreaterThanOrEqual(2);
  });

  it("has a stub, tests, a solution for every stub and at least one recorded mistake", () => {
    expect(ex.stubs.length).toBeGreaterThan(0);
    expect(ex.tests.length).toBeGreaterThan(0);
    for (const stub of ex.stubs) expect(existsSync(join(root, ex.solutionDir, stub)), stub).toBe(true);
    const mistakes = listMistakes(ex);
    expect(mistakes.length).toBeGreaterThan(0);
    for (const m of mistakes) {
      expect(ex.stubs, `${m.file} must name the stub it replaces with "// @replaces <file>.ts"`).toContain(
        m.replaces,
      );
      expect(readFileSync(join(root, ex.solutionDir, m.file), "utf8")).toMatch(/^\/\/ Mistake: \S/);
    }
  });

  it("solution passes every test", () => {
    const r = result(`${ex.id}:solution`);
    expect(r.failed, describeFailure(`${ex.id}:solution`)).toBe(0);
    expect(r.passed).toBeGreaterThan(0);
  });

  it("stub fails at least one test in every test file", () => {
    const r = result(`${ex.id}:stub`);
    for (const [file, f] of Object.entries(r.files)) {
      expect(f.failed, `${file} passes entirely against the stub`).toBeGreaterThan(0);
    }
  });

  if ((ex.optionalTests ?? []).length > 0) {
    it("its required part has recorded mistakes, each failing a required test", () => {
      const optional = (ex.optionalTests ?? []).map((t) => join(ex.dir, t));
      const failsRequired = (file: string) =>
        Object.entries(result(`${ex.id}:${file}`).files).some(
          ([f, s]) => !optional.includes(f) && s.failed > 0,
        );
      const required = listMistakes(ex).filter((m) => failsRequired(m.file));
      expect(required.length, "no recorded mistake fails a test of the required part").toBeGreaterThan(0);
    });
  }

  for (const m of listMistakes(ex)) {
    it(`recorded mistake ${m.file} fails at least one test`, () => {
      const r = result(`${ex.id}:${m.file}`);
      expect(r.failed, `${m.file} passes every test: the tests do not catch this mistake`).toBeGreaterThan(0);
      // The mistake must load and run: a file that fails only because it does not compile proves nothing.
      expect(
        Object.values(r.files).filter((f) => f.loadError),
        describeFailure(`${ex.id}:${m.file}`),
      ).toEqual([]);
    });
  }
});
