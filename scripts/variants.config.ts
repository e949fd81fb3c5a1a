/**
 * The vitest configuration for exercise variants: one project per (exercise, implementation).
 *
 * Read by scripts/variants.ts through the COURSE_VARIANTS environment variable; see that file for
 * why variants exist. Each project's resolver swaps the exercise's stub for another file.
 *
 * @upstream none — course tooling
 * @chapter 00-life-of-a-pod
 */
import { readFileSync } from "node:fs";
import { join, relative } from "node:path";
import type { Plugin } from "vite";
import { defineConfig } from "vitest/config";
import { root } from "./course.ts";
import { pristineRoot, type Variant } from "./variants.ts";

function swapPlugin(swap: Record<string, string>, importsAs: [string, string][]): Plugin {
  return {
    name: "course:swap-stub",
    enforce: "pre",
    async resolveId(source, importer, options) {
      if (!importer) return null;
      // A committed stub copied under .grade/pristine/ imports as if it were still in exercises/;
      // so does a file of another copy of the exercises (grade --target <folder>).
      const mirror = importsAs.find(([dir]) => importer.startsWith(`${dir}/`));
      const from = mirror ? join(mirror[1], relative(mirror[0], importer)) : importer;
      const resolved = await this.resolve(source, from, { ...options, skipSelf: true });
      if (!resolved) return null;
      const id = resolved.id.split("?")[0];
      return swap[id] ?? resolved;
    },
  };
}

const specPath = process.env.COURSE_VARIANTS;
if (!specPath)
  throw new Error("scripts/variants.config.ts is run by scripts/variants.ts (COURSE_VARIANTS is unset)");
const variants = JSON.parse(readFileSync(specPath, "utf8")) as Variant[];

export default defineConfig({
  test: {
    reporters: [join(root, "scripts", "variants-reporter.ts")],
    testTimeout: 20_000,
    projects: variants.map((v) => ({
      plugins: [swapPlugin(v.swap, [[pristineRoot, root], ...(v.importsAs ? [v.importsAs] : [])])],
      test: { name: v.name, root, include: v.tests, testTimeout: 20_000 },
    })),
  },
});
