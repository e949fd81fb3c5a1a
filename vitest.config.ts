import { defineConfig } from "vitest/config";
import { LongFirstSequencer } from "./scripts/test-order.ts";

// The project's own tests: the miniature (code/), the course tooling (scripts/) and the site.
// Exercise tests are not run here directly — they fail on the stubs by design; the
// exercise-integrity test (scripts/exercise-integrity.test.ts) runs them against stubs,
// solutions and recorded mistakes.
export default defineConfig({
  test: {
    include: [
      "code/**/*.test.ts",
      "scripts/**/*.test.ts",
      "chapters/**/*.test.ts",
      ".vitepress/**/*.test.ts",
    ],
    exclude: ["**/node_modules/**", ".vitepress/dist/**", ".vitepress/cache/**"],
    // COURSE_CPU_LOG=<file> logs each test file's CPU seconds (scripts/cpu-usage.setup.ts;
    // `npx tsx scripts/cpu-usage.ts <file>` lists the heaviest).
    setupFiles: process.env.COURSE_CPU_LOG ? ["scripts/cpu-usage.setup.ts"] : [],
    // Two files at once on CI's two cores: many files spend their time waiting on child
    // processes and timers, so one worker left a core idle for a third of the run. The longest
    // files start first (scripts/test-order.ts) so they do not run alone at the end.
    maxWorkers: 2,
    sequence: { sequencer: LongFirstSequencer },
    testTimeout: 30_000,
    hookTimeout: 120_000,
  },
});
