/**
 * Build-time data for `<CourseMap/>`: the course plan joined to the chapter folders (see
 * ../course-plan.ts), with the descriptions rendered as inline HTML.
 *
 * @upstream none — course tooling (a VitePress data loader)
 * @chapter 00-life-of-a-pod
 */
import { inlineMarkdown } from "../../scripts/headers.ts";
import { type CourseMapRow, courseMap } from "../course-plan.ts";

export type CourseMapData = (CourseMapRow & { buildsHtml: string; flowHtml: string })[];

export default {
  // A chapter lands (or is renamed) by its folder and its page's title.
  watch: ["../../chapters/*/index.md"],
  load: (): CourseMapData =>
    courseMap().map((row) => ({
      ...row,
      buildsHtml: inlineMarkdown(row.builds),
      flowHtml: inlineMarkdown(row.flow),
    })),
};
