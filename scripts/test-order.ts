/**
 * The order vitest starts test files in, for `npm test` on two workers.
 *
 * Solves: a fresh clone (CI) has no timing cache, so vitest starts files in glob order and the
 * longest ones — the site build with its browser checks, and the exercise-integrity proof —
 * would start last and run alone at the end while the other worker sits idle. Starting them
 * first lets the hundreds of short files fill the other worker meanwhile.
 *
 * Invariants:
 * - the files in `longFirst` start first, in that order; every other file keeps vitest's own
 *   order (failed first, then longest by the cache, else larger first);
 * - a name in `longFirst` that matches no file is ignored (a renamed file only loses its place).
 *
 * @upstream none — course tooling
 * @chapter 00-life-of-a-pod
 */
import { BaseSequencer, type TestSpecification } from "vitest/node";

/** Test files that take minutes, by path from the repository root. */
export const longFirst = [
  "scripts/site.test.ts",
  "scripts/exercise-integrity.test.ts",
  "scripts/grade.test.ts",
];

export function rank(moduleId: string): number {
  const i = longFirst.findIndex((f) => moduleId.endsWith(`/${f}`));
  return i === -1 ? longFirst.length : i;
}

export class LongFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    // Array.prototype.sort is stable: equal ranks keep vitest's order.
    return [...sorted].sort((a, b) => rank(a.moduleId) - rank(b.moduleId));
  }
}
