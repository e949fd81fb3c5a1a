/**
 * Build-time data for docs/upstream-map.md: every file in code/ with the upstream files its header names.
 *
 * @upstream none — course tooling (a VitePress data loader)
 * @chapter 00-life-of-a-pod
 */
import { resolve } from "node:path";
import { type MapRow, upstreamMap } from "../scripts/headers.ts";
import { sourceUrl } from "../scripts/source-pages.ts";

const root = resolve(import.meta.dirname, "..");

export default {
  watch: ["../code/**/*.ts"],
  load(): (MapRow & { url?: string })[] {
    // `url`: the file's annotated-source page, so pages link it without knowing the route scheme.
    return upstreamMap(root).map((row) => ({ ...row, url: sourceUrl(row.file) }));
  },
};
