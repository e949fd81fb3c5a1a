/**
 * Build-time data for docs/upstream-map.md: every file in code/ with the upstream files its header names.
 *
 * @upstream none — course tooling (a VitePress data loader)
 * @chapter 00-life-of-a-pod
 */
import { resolve } from "node:path";
import { inlineMarkdown, type MapRow, upstreamMap } from "../scripts/headers.ts";
import { isTestingFile, sourceUrl } from "../scripts/source-pages.ts";

const root = resolve(import.meta.dirname, "..");

export interface UpstreamMapRow extends MapRow {
  /** The file's annotated-source page, so pages link it without knowing the route scheme. */
  url?: string;
  /** The summary (the header's first sentence) as HTML: `inline code` shown as code. */
  summaryHtml: string;
  /** A test harness, suite or benchmark (`testing/`): listed apart from the learner's files. */
  testing: boolean;
}

export function upstreamMapRows(base = root): UpstreamMapRow[] {
  return upstreamMap(base).map((row) => ({
    ...row,
    url: sourceUrl(row.file),
    summaryHtml: inlineMarkdown(row.summary),
    testing: isTestingFile(row.file),
  }));
}

export default {
  watch: ["../code/**/*.ts"],
  load: (): UpstreamMapRow[] => upstreamMapRows(),
};
