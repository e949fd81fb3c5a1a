/**
 * The performance page's machinery, from file to chart: the data loader (docs/performance.data.ts)
 * reads a results file and gives each benchmark's figures, and `<BenchFigures/>` — the real
 * single-file component, compiled here for server rendering as VitePress's build does — draws
 * exactly those figures: the values on the page are the values in the file.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { transformSync } from "esbuild";
import { afterAll, describe, expect, it } from "vitest";
// The compiler VitePress builds the theme's components with (vue comes with vitepress).
import { compileScript, compileTemplate, parse } from "vue/compiler-sfc";
import { type PerformanceData, performanceData } from "../../docs/performance.data.ts";
import { type BenchEntry, thisMachine, writeResults } from "../../scripts/bench-results.ts";
import { chartRows, measuredLine, verdict } from "./bench-chart.ts";

const dir = mkdtempSync(join(tmpdir(), "performance-page-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const entry = (name: string, result: unknown[], date: string): BenchEntry => ({
  name,
  args: ["--quick"],
  date,
  commit: "f00dfee",
  machine: thisMachine(),
  loadAverage: { before: 0.42, after: 1.37 },
  seconds: 12,
  result,
});
const put = (putsPerSec: number, p99Ms: number) => ({ putsPerSec, p99Ms });
const storeTarget = (a: number, b: number, p99: number, w: number) => ({
  puts1: put(a, 1),
  putsMany: put(b, p99),
  watch: { eventsPerSec: w },
});
const summary = (p50: number, p90: number, p99: number) => ({ n: 10, p50, p90, p99, max: p99 });
const startup = (pods: number, s: ReturnType<typeof summary>) => ({ pods, notRunning: 0, startup: s });

/** A results file as `npm run bench -- all --json` writes it: a store run and a cluster run. */
function writeFixture(file: string): void {
  writeResults(
    {
      version: 1,
      entries: [
        entry(
          "store",
          [{ targets: [storeTarget(251, 1203, 317, 38111), storeTarget(557, 1907, 121, 90007)] }],
          "2026-11-30T10:00:00.000Z",
        ),
        entry(
          "cluster",
          [
            {
              sloP99Ms: 5000,
              upstreamMemoryMiB: { "kube-apiserver": 4000 },
              latency: {
                nodes: 5,
                small: startup(10, summary(1642, 1709, 1713)),
                scaleUp: {
                  replicas: 20,
                  notReady: 0,
                  allPodsReadySeconds: 2.4,
                  podCreatedToReady: summary(958, 1231, 1368),
                },
              },
              memory: { nodes: 10, pods: 60, withPods: { "kube-apiserver": { rssMiB: 224, peakMiB: 224 } } },
            },
          ],
          "2026-12-07T11:30:00.000Z",
        ),
      ],
    },
    file,
  );
}

describe("the performance page's data loader", () => {
  it("reads every benchmark's figures from the results file, in its order", () => {
    const file = join(dir, "results.json");
    writeFixture(file);
    const data = performanceData(file);
    expect(data.sections.map((s) => [s.name, s.date, s.commit])).toEqual([
      ["store", "2026-11-30T10:00:00.000Z", "f00dfee"],
      ["cluster", "2026-12-07T11:30:00.000Z", "f00dfee"],
    ]);
    const store = data.sections[0].figures;
    expect(store.map((f) => [f.label, f.ours, f.reference.value])).toEqual([
      ["puts, 1 client", 251, 557],
      ["puts, 64 clients", 1203, 1907],
      ["put p99, 64 clients", 317, 121],
      ["watch delivery, 100 watchers", 38111, 90007],
    ]);
    const cluster = data.sections[1].figures;
    expect(cluster.map((f) => [f.label, f.ours, f.reference.value])).toEqual([
      ["pod startup p50, 10 pods on 5 hollow nodes", 1642, 5000],
      ["pod startup p90, 10 pods on 5 hollow nodes", 1709, 5000],
      ["pod startup p99, 10 pods on 5 hollow nodes", 1713, 5000],
      ["Deployment scale-up 0 → 20: every pod Ready", 2.4, 120],
      ["Deployment scale-up 0 → 20: pod created → Ready p99", 1368, 5000],
      ["kube-apiserver resident memory, 10 nodes / 60 pods", 224, 4000],
    ]);
  });

  it("has nothing to chart when there is no results file", () => {
    expect(performanceData(join(dir, "none.json"))).toEqual({ sections: [] });
  });

  it("fails on an entry no benchmark's figures are defined for, naming it", () => {
    const file = join(dir, "mystery.json");
    writeResults({ version: 1, entries: [entry("mystery", [{}], "2026-12-07T00:00:00.000Z")] }, file);
    expect(() => performanceData(file)).toThrow('no figures are defined for benchmark "mystery"');
  });
});

describe("the chart of one benchmark", () => {
  it("draws both bars on one scale, the longer full width, and a verdict that reads as a rate", () => {
    const file = join(dir, "results.json");
    writeFixture(file);
    const [store] = performanceData(file).sections;
    const [puts1, , p99] = chartRows(store);
    expect(puts1.bars.map((b) => [b.who, b.value, b.width])).toEqual([
      ["ours", "251", "45.1%"],
      ["the real etcd, same machine, same run", "557", "100%"],
    ]);
    expect(puts1.unit).toBe("(puts/s, higher is better)");
    expect(puts1.verdict).toBe("0.45× (worse)");
    // Lower is better: 121 ms against our 317 ms is etcd 2.6 times better.
    expect(p99.verdict).toBe("0.38× (worse)");
    expect(verdict({ ...store.figures[2], ours: 100 })).toBe("1.21× (better or equal)");
    expect(measuredLine(store)).toMatch(
      /^Measured 2026-11-30 at commit f00dfee on \d+ × .+, \d+ GiB, .+, Node v[\d.]+(, etcd [\d.]+)?; load average 0\.42 before, 1\.37 after; flags --quick\.$/,
    );
  });
});

// #region render
/**
 * BenchFigures.vue compiled for the server (script, then template with the script's bindings),
 * its `data` import pointed at `data`; rendered to HTML for `bench`.
 */
async function renderBenchFigures(data: PerformanceData, bench: string): Promise<string> {
  const require = createRequire(import.meta.url);
  const file = new URL("./BenchFigures.vue", import.meta.url).pathname;
  const { descriptor } = parse(readFileSync(file, "utf8"), { filename: file });
  const script = compileScript(descriptor, { id: "bench-figures" });
  const template = compileTemplate({
    source: descriptor.template!.content,
    filename: file,
    id: "bench-figures",
    ssr: true,
    compilerOptions: { bindingMetadata: script.bindings },
  });
  const dataModule = join(dir, `data-${bench}.mjs`);
  writeFileSync(dataModule, `export const data = ${JSON.stringify(data)};\n`);
  const imports: Record<string, string> = {
    vue: require.resolve("vue"),
    "vue/server-renderer": require.resolve("vue/server-renderer"),
    "../../docs/performance.data.ts": dataModule,
    "./bench-chart.ts": new URL("./bench-chart.ts", import.meta.url).pathname,
  };
  const source = [
    script.content.replace("export default ", "const __sfc = "),
    template.code.replace("export function ssrRender", "function ssrRender"),
    "__sfc.ssrRender = ssrRender;",
    "export default __sfc;",
  ].join("\n");
  const js = transformSync(source, { loader: "ts", format: "esm" }).code.replace(
    /from "([^"]+)"/g,
    (whole, spec: string) =>
      imports[spec] ? `from ${JSON.stringify(pathToFileURL(imports[spec]).href)}` : whole,
  );
  const module = join(dir, `BenchFigures-${bench}.mjs`);
  writeFileSync(module, js);
  const component = (await import(pathToFileURL(module).href)).default;
  const { createSSRApp } = await import(pathToFileURL(imports.vue).href);
  const { renderToString } = await import(pathToFileURL(imports["vue/server-renderer"]).href);
  return renderToString(createSSRApp(component, { bench }));
}
// #endregion render

describe("<BenchFigures/>, rendered", () => {
  it("shows the file's figures and where they were measured, and nothing else", async () => {
    const file = join(dir, "results.json");
    writeFixture(file);
    const data = performanceData(file);
    const html = await renderBenchFigures(data, "cluster");
    const text = html.replace(/<!--[\s\S]*?-->/g, "").replace(/<[^>]+>/g, "\n");
    const values = [...html.matchAll(/class="bench-value">([^<]*)</g)].map((m) =>
      Number(m[1].replace(/,/g, "")),
    );
    // Two bars a figure: ours, then the reference, each the file's number.
    expect(values).toEqual(data.sections[1].figures.flatMap((f) => [f.ours, f.reference.value]));
    for (const f of data.sections[1].figures) expect(text).toContain(f.label);
    expect(text).toContain("Measured 2026-12-07 at commit f00dfee");
    expect(text).not.toContain("puts, 1 client"); // the store's figures are not the cluster's
    expect(html).toContain('style="width:100%;"');
  });

  it("says how to measure a benchmark the file has no entry for", async () => {
    const html = await renderBenchFigures({ sections: [] }, "kubelet");
    expect(html).toContain("No results for <code>kubelet</code> yet");
    expect(html).toContain("npm run bench -- all --json --only kubelet");
  });
});
