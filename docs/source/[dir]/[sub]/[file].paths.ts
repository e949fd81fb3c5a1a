/**
 * The dynamic route behind /docs/source/dir/sub/file: annotated-source pages for files whose path
 * below code/ has 3 parts (see scripts/source-pages.ts; one route file per depth, as VitePress routes match
 * whole path segments).
 *
 * @upstream none — course tooling (a VitePress dynamic route)
 * @chapter 00-life-of-a-pod
 */
import { sourcePages } from "../../../../scripts/source-pages.ts";

export default {
  watch: ["../../../../code/**/*.ts"],
  paths() {
    return sourcePages()
      .filter((p) => p.segments.length === 3)
      .map(({ segments: s, markdown }) => ({
        params: { dir: s[0], sub: s[1], file: s[2] },
        content: markdown,
      }));
  },
};
