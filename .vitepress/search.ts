/**
 * The local search index for pages that have no markdown file of their own: the annotated-source
 * pages, which VitePress builds from dynamic routes (docs/source/[dir]/[file].paths.ts).
 *
 * Solves: VitePress 1.6's local search reads each page's markdown from its file; a dynamic route's
 * page has no file (its markdown is the route's `content`), so the search plugin indexed it as empty
 * and searching `syncWatchers` found the chapter sections but never `watchable-store.ts`. The
 * plugin lets the site split a page into sections itself (`miniSearch._splitIntoSections`, called
 * with the page's path even when the page rendered empty): for a source page, this module renders
 * the page's own markdown — code included, as plain text — and cuts it into sections at its
 * headings, as VitePress does for other pages.
 *
 * Invariants:
 * - a source page is indexed from the same markdown it is built from (scripts/source-pages.ts);
 * - every other page is left to VitePress's own splitter.
 *
 * @upstream none — course tooling (works around vuejs/vitepress src/node/plugins/localSearchPlugin.ts, which reads pages from files)
 * @chapter 00-life-of-a-pod
 */

export interface SearchSection {
  anchor: string;
  titles: string[];
  text: string;
}

const stripTags = (html: string) => html.replace(/<[^>]*>/g, "");

/**
 * A rendered page cut at its headings (`<h1>`…`<h6>` with an id): each section's text, anchor and
 * the titles above it, as VitePress's local search indexes a page.
 */
export function pageSections(html: string): SearchSection[] {
  const heading = /<h([1-6])[^>]*\bid="([^"]*)"[^>]*>([\s\S]*?)<\/h\1>/g;
  const found = [...html.matchAll(heading)];
  const sections: SearchSection[] = [];
  const parents: string[] = [];
  found.forEach((m, i) => {
    const level = Number(m[1]) - 1;
    const title = stripTags(m[3])
      .replace(/\u200b/g, "")
      .trim();
    const start = (m.index ?? 0) + m[0].length;
    const end = i + 1 < found.length ? (found[i + 1].index ?? html.length) : html.length;
    const text = stripTags(html.slice(start, end));
    parents.length = level;
    parents[level] = title;
    if (title && text.trim()) sections.push({ anchor: m[2], titles: parents.filter(Boolean), text });
  });
  return sections;
}
