// The bind benchmark in a tiny size: it runs end to end (API server, informers, load generator),
// and `--json` prints one JSON object whose counts are consistent with the sizes asked: every
// informer saw every pod bound, and no watch was closed nor any informer relisted (with a
// handful of pods no watcher can fall behind, so anything else is a bug, not load).
// Timing is not checked here (performance is measured by `npm run bench -- bind`).
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { runScriptToEnd } from "../../testing/child-process.ts";

const root = fileURLToPath(new URL("../../..", import.meta.url));
const bench = join(root, "code", "apiserver", "testing", "bind.bench.ts");

const run = (args: string[]) => runScriptToEnd(bench, args);

describe("bind benchmark (tiny)", () => {
  it("creates and binds every pod, and the informers see them all bound without a relist", async () => {
    const r = await run([
      "--quick",
      "--pods",
      "30",
      "--creates",
      "10",
      "--clients",
      "4",
      "--informers",
      "2",
      "--json",
    ]);
    expect(r.code, r.stderr).toBe(0);
    const result = JSON.parse(r.stdout);
    expect(result.sizes).toEqual({ pods: 30, creates: 10, clients: 4, informers: 2 });
    expect(result.ceilingPodsPerSec).toBe(result.createBind.podsPerSec);
    expect(result.ceilingPodsPerSec).toBeGreaterThan(0);
    expect(result.watchesClosedByServer).toBe(0);
    expect(result.informers).toMatchObject({ relists: 0, expired: 0, sawEveryPodBound: true });
    expect(r.stderr).toMatch(/informers synced/);
  }, 60_000);
});
