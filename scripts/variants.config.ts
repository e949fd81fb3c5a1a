/**
 * The vitest configuration for exercise variants: one project per (exercise, implementation).
 *
 * Read by scripts/variants.ts through the COURSE_VARIANTS environment variable; see that file for
 * why variants exist. Each project's resolver swaps the exercise's stub for another file.
 *
 * The projects share one on-disk cache of transformed modules (node_modules/.cache/course-variants,
 * keyed by each file's content), so a file of code/ that two hundred variants import is transformed
 * once, not two hundred times; a module whose imports the swap can change is cached per variant (see
 * swapPlugin). Every run shares it, whatever COURSE_GRADE_DIR says: the grader's tests reuse what
 * the integrity test transformed.
 *
 * @upstream none — course tooling
 * @chapter 00-life-of-a-pod
 */
import { readFileSync } from "node:fs";
import { join, relative } from "node:path";
import type { Plugin } from "vite";
import { defineConfig } from "vitest/config";
import type { VitestPluginContext } from "vitest/node";
import { root } from "./course.ts";
import { needsCluster } from "./grader-cluster.ts";
import { pristineRoot, type Variant } from "./variants.ts";

function swapPlugin(swap: Record<string, string>, importsAs: [string, string][]): Plugin {
  // The transformed code of a module names the files its imports resolved to, and only this plugin
  // makes that differ between variants, for a module outside code/ and node_modules/ (a test file,
  // a stub, a solution: code/ never imports an exercise). So those modules are cached per swap;
  // everything else is transformed once for all the variants (experimental.fsModuleCache below).
  const variantKey = JSON.stringify([swap, importsAs]);
  const plugin: Plugin & { configureVitest: (ctx: VitestPluginContext) => void } = {
    name: "course:swap-stub",
    enforce: "pre",
    configureVitest({ experimental_defineCacheKeyGenerator }) {
      experimental_defineCacheKeyGenerator(({ environment, id }) => {
        // Every project registers a generator and all of them see every module: answer only for ours.
        if (!environment.config.plugins.includes(plugin)) return undefined;
        return sharedModule(id) ? "" : variantKey;
      });
    },
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
  return plugin;
}

const codeDir = `${join(root, "code")}/`;
const sharedModule = (id: string) => id.startsWith(codeDir) || id.includes("/node_modules/");

const specPath = process.env.COURSE_VARIANTS;
if (!specPath)
  throw new Error("scripts/variants.config.ts is run by scripts/variants.ts (COURSE_VARIANTS is unset)");
const variants = JSON.parse(readFileSync(specPath, "utf8")) as Variant[];

// Chapter 8's exercises run against one live cluster (scripts/grader-cluster.setup.ts starts it
// only when such a test is in the run). Their tests mostly wait on the cluster, not on a CPU, so
// they run as a group of their own, first and several at once — one at a time, a dozen variants
// that each wait a minute for pods would take a dozen minutes; the other variants follow with
// vitest's usual number of workers.
const clusterVariant = (v: Variant) => v.tests.some(needsCluster);
const clusterFiles = variants.filter(clusterVariant).reduce((n, v) => n + v.tests.length, 0);
const clusterWorkers = Math.min(Math.max(clusterFiles, 1), 8);

export default defineConfig({
  test: {
    reporters: [join(root, "scripts", "variants-reporter.ts")],
    experimental: {
      fsModuleCache: true,
      fsModuleCachePath: join(root, "node_modules", ".cache", "course-variants"),
    },
    testTimeout: 20_000,
    globalSetup: [join(root, "scripts", "grader-cluster.setup.ts")],
    projects: variants.map((v) => ({
      plugins: [swapPlugin(v.swap, [[pristineRoot, root], ...(v.importsAs ? [v.importsAs] : [])])],
      test: {
        name: v.name,
        root,
        include: v.tests,
        testTimeout: 20_000,
        ...(clusterFiles === 0
          ? {}
          : clusterVariant(v)
            ? { maxWorkers: clusterWorkers, sequence: { groupOrder: 0 } }
            : { sequence: { groupOrder: 1 } }),
      },
    })),
  },
});
