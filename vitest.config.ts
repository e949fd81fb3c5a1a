import { defineConfig } from "vitest/config";

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
    testTimeout: 30_000,
    hookTimeout: 120_000,
  },
});
