/**
 * `npm test` — everything that must hold before a change lands, ending in one summary line.
 *
 *   1. types:  tsc --noEmit (strict)
 *   2. lint:   biome check (formatting and lint rules)
 *   3. tests:  vitest run — unit tests beside the code, the exercise-integrity proof, the site build
 *              and the browser test
 *
 * Arguments are passed to vitest (`npm test -- code/store` runs only the store's tests; the type and
 * lint steps still run). The last line reads `tests: N passed, N failed, N skipped`.
 *
 * @upstream none — course tooling
 * @chapter 00-life-of-a-pod
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { root } from "./course.ts";

const bin = (pkg: string, file: string) => join(root, "node_modules", pkg, file);
const args = process.argv.slice(2);

function step(name: string, argv: string[]): boolean {
  console.log(`\n▶ ${name}: ${argv.map((a) => a.replace(root + "/", "")).join(" ")}`);
  const started = Date.now();
  const r = spawnSync(argv[0], argv.slice(1), { cwd: root, stdio: "inherit" });
  const ok = r.status === 0;
  console.log(
    `${ok ? "✓" : "✗"} ${name} ${ok ? "passed" : "FAILED"} in ${((Date.now() - started) / 1000).toFixed(1)} s`,
  );
  return ok;
}

const node = process.execPath;
const typesOk = step("types", [node, bin("typescript", "bin/tsc"), "--noEmit", "-p", root]);
const biome = join(root, "node_modules", ".bin", "biome");
const lintOk = step("lint", [biome, "check", "--no-errors-on-unmatched", root]);

const resultsDir = join(root, ".test-results");
const jsonOut = join(resultsDir, "vitest.json");
mkdirSync(resultsDir, { recursive: true });
rmSync(jsonOut, { force: true });
const testsOk = step("tests", [
  node,
  bin("vitest", "vitest.mjs"),
  "run",
  "--reporter=default",
  "--reporter=json",
  `--outputFile.json=${jsonOut}`,
  ...args,
]);

let passed = 0;
let failed = 0;
let skipped = 0;
if (existsSync(jsonOut)) {
  const r = JSON.parse(readFileSync(jsonOut, "utf8")) as {
    numPassedTests: number;
    numFailedTests: number;
    numPendingTests: number;
    numTodoTests: number;
    testResults: { status: string; assertionResults: { status: string }[] }[];
  };
  passed = r.numPassedTests;
  // A test file that failed with no failed test in it (it did not load, or a beforeAll failed and
  // its tests were skipped) is a failure all the same. (Not numFailedTestSuites: it counts every
  // describe block around a failed test as one more.)
  const failedFiles = r.testResults.filter(
    (f) => f.status === "failed" && !f.assertionResults.some((a) => a.status === "failed"),
  );
  failed = r.numFailedTests + failedFiles.length;
  skipped = r.numPendingTests + r.numTodoTests;
} else {
  failed = 1;
}
const checks = [typesOk ? "types ok" : "types FAILED", lintOk ? "lint ok" : "lint FAILED"].join(", ");
console.log(`\n${checks}`);
console.log(`tests: ${passed} passed, ${failed} failed, ${skipped} skipped`);
process.exit(typesOk && lintOk && testsOk && failed === 0 ? 0 : 1);
