// The informer benchmark in a tiny size: it runs end to end against a kube-apiserver child, prints
// its table and verdict, and `--json` prints one JSON object whose counts match the sizes asked
// (every handler of both informers saw every change; both caches hold the pods left). The text
// run drains the changes as a burst (the default); the JSON run uses `--live` (writer-paced).
// Timing is not checked here (performance is measured by `npm run bench -- informer`, never in tests).
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { runScriptToEnd } from "../../testing/child-process.ts";

const root = fileURLToPath(new URL("../../..", import.meta.url));
const bench = join(root, "code", "client", "testing", "informer.bench.ts");
const tiny = ["--quick", "--pods", "30", "--changes", "24", "--writers", "2"];

const run = (args: string[]) => runScriptToEnd(bench, args);

interface Side {
  syncMs: number;
  cached: number;
  bytesPerObject: number;
  handlers: { events: number; perSec: number }[];
  perSec: number;
}

describe("informer.bench.ts in quick mode", () => {
  it("prints its table and verdict, and --json one object with the counts asked", async () => {
    const [text, json] = await Promise.all([run(tiny), run([...tiny, "--json", "--live"])]);

    expect(text.code, text.stderr).toBe(0);
    expect(text.stderr).toContain("… filling 30 pods (writer child)");
    expect(text.stderr).toContain("… 24 changes (writer child, 2 clients); both informers watching");
    expect(text.stdout).toContain("Informer benchmark — 30 pods, then 24 changes");
    expect(text.stdout).toMatch(/sync 30 pods: ms\s+[\d,]+\s+[\d,]+\s+[\d.,]+×/);
    expect(text.stdout).toMatch(/heap bytes per cached pod\s+-?[\d,]+\s+-?[\d,]+/);
    for (const i of [1, 2, 3])
      expect(text.stdout).toMatch(new RegExp(`handler ${i}: events/s\\s+[\\d,]+\\s+[\\d,]+`));
    expect(text.stdout).toContain("written while neither informer read; then drained as a burst");
    expect(text.stdout).toMatch(/events\/s ours \/ client-node ≥ 1\.0×: (PASS|FAIL) \([\d.,]+×\)/);

    expect(json.code, json.stderr).toBe(0);
    const out = JSON.parse(json.stdout) as {
      options: { pods: number; changes: number };
      ours: Side;
      theirs: Side;
      ratio: number;
      pass: boolean;
    };
    expect(out.options).toMatchObject({ pods: 30, changes: 24 });
    // 24 changes: 8 creates, 8 patches, 8 deletes — 30 pods remain, each handler heard 24 events.
    for (const side of [out.ours, out.theirs]) {
      expect(side.cached).toBe(30);
      expect(side.handlers.map((h) => h.events)).toEqual([24, 24, 24]);
      expect(Number.isFinite(side.bytesPerObject)).toBe(true);
    }
    expect(out.pass).toBe(out.ratio >= 1);
  }, 180_000);
});
