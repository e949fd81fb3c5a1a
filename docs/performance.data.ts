/**
 * Build-time data for docs/performance.md: every benchmark's figures, read from the committed
 * results file (docs/performance/results.json, which `npm run bench -- all --json` rewrites) by
 * each benchmark's extractor (scripts/bench-figures.ts). The page's charts
 * (`<BenchFigures bench="…"/>`) show only what this returns: no figure on the page is typed in.
 *
 * Invariants:
 * - no results file: no sections (the page has nothing to chart, and says how to measure);
 * - an entry the extractors cannot read fails the site build, naming the benchmark and the
 *   field: a renamed field cannot silently empty a chart.
 *
 * @upstream none — course tooling (a VitePress data loader)
 * @chapter 00-life-of-a-pod
 */
import { type Section, sections } from "../scripts/bench-figures.ts";
import { readResults, resultsFile } from "../scripts/bench-results.ts";

export interface PerformanceData {
  /** One per benchmark in the file, in the course's order (the file keeps that order). */
  sections: Section[];
}

/** The figures of the results file `file` (default: the committed one). */
export function performanceData(file = resultsFile): PerformanceData {
  return { sections: sections(readResults(file).entries) };
}

export default {
  // A new run of `npm run bench -- all --json` redraws the charts.
  watch: ["./performance/results.json"],
  load: (): PerformanceData => performanceData(),
};
