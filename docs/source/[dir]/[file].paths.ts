/**
 * The dynamic route behind /docs/source/<dir>/<file>: one page per file of code/ (see scripts/source-pages.ts).
 *
 * @upstream none — course tooling (a VitePress dynamic route)
 * @chapter 00-life-of-a-pod
 */
import { sourcePages } from "../../../scripts/source-pages.ts";

export default {
  watch: ["../../../code/**/*.ts"],
  paths() {
    return sourcePages().map((p) => ({ params: { dir: p.dir, file: p.name }, content: p.markdown }));
  },
};
