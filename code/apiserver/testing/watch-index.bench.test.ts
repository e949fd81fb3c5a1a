// The watch-index benchmark in a tiny size: it runs both dispatches end to end and `--json`
// prints one object whose sizes are those asked, with a figure for each. The benchmark itself
// fails the run if any node watcher misses one of its pods' events or is closed, so a pass also
// says every event reached its node's watcher with the index on and off.
// Timing is not checked here (performance is measured by `npm run bench -- watch-index`).
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { runScriptToEnd } from "../../testing/child-process.ts";

const root = fileURLToPath(new URL("../../..", import.meta.url));
const bench = join(root, "code", "apiserver", "testing", "watch-index.bench.ts");

describe("watch-index benchmark (tiny)", () => {
  it("delivers every pod event to its node's watcher, indexed and not, and prints both figures", async () => {
    const r = await runScriptToEnd(bench, ["--quick", "--nodes", "20", "--writes", "100", "--json"]);
    expect(r.code, r.stderr).toBe(0);
    const { watchIndex } = JSON.parse(r.stdout);
    expect(watchIndex.sizes).toEqual({ nodes: 20, writes: 100, writers: 4, rounds: 1 });
    for (const run of [watchIndex.indexed, watchIndex.notIndexed]) {
      expect(run.writesPerSec).toBeGreaterThan(0);
      expect(run.cpuUsPerWrite).toBeGreaterThan(0);
    }
    expect(r.stderr).toMatch(/round 1\/1: not indexed/);
  }, 60_000);
});
