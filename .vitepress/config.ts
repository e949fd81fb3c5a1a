/**
 * The course site: VitePress with its source at the repository root.
 *
 * Pages are `index.md`, `docs/*.md` and `chapters/NN-slug/index.md`; the code, exercises and
 * solutions are not pages (chapters embed the code with snippet imports instead). The sidebar is
 * built from the chapters folder, so a new chapter appears without editing this file.
 *
 * The markdown pipeline adds three things to VitePress's: a broken snippet import fails the build,
 * and every embedded block gets a caption linking its file's annotated page (snippets.ts); a
 * mermaid block becomes a diagram drawn legibly in the browser (diagrams.ts). The local search
 * also indexes the annotated-source pages, which VitePress alone leaves out (search.ts).
 *
 * @upstream none — course tooling
 * @chapter 00-life-of-a-pod
 */
import { existsSync, readFileSync } from "node:fs";
import { resolve } from "node:path";
import githubDark from "@shikijs/themes/github-dark";
import githubLight from "@shikijs/themes/github-light";
import { type DefaultTheme, defineConfig, type MarkdownEnv, type MarkdownRenderer } from "vitepress";
import { listChapters } from "../scripts/course.ts";
import { type SourcePage, sourcePages, sourceUrl } from "../scripts/source-pages.ts";
import { diagramFences } from "./diagrams.ts";
import { onePassDualTheme } from "./highlight.ts";
import { mermaidFromDist } from "./mermaid-assets.ts";
import { pageSections } from "./search.ts";
import { findSnippetRefs, snippetCaptions, snippetChecks } from "./snippets.ts";

const srcDir = resolve(import.meta.dirname, "..");

// Highlighting is most of the build (every file of code/ is a page): VitePress's own two themes,
// tokenized once for both, with token colours as classes (see highlight.ts).
const highlighting = onePassDualTheme(githubLight, githubDark, { classes: true });

/**
 * Markdown code as plain escaped text: the search index keeps only the text, so colours are waste.
 * Escaped as shiki escapes (`&` and `<` only, as hex references), so the index holds the same words.
 */
const plainCode = (code: string) =>
  `<pre v-pre><code>${code.replace(/&/g, "&#x26;").replace(/</g, "&#x3C;")}</code></pre>`;

/**
 * A page's HTML for the search index: the index is built from each page's HTML with the tags
 * stripped, so it is rendered with the plain highlighter — the same text without running the
 * highlighter a second (and, as VitePress indexes in both bundles, third) time.
 */
function renderForSearch(src: string, env: MarkdownEnv, md: MarkdownRenderer): string {
  // VitePress has one markdown-it for pages and search: the plain highlighter is lent for this
  // (synchronous) render only, so no page can be rendered with it.
  const highlight = md.options.highlight;
  md.options.highlight = plainCode;
  let html: string;
  try {
    html = md.render(src, env);
  } finally {
    md.options.highlight = highlight;
  }
  return env.frontmatter?.search === false ? "" : html;
}

/** The site's markdown renderer, kept when VitePress creates it (the search index renders with it too). */
let siteMarkdown: MarkdownRenderer | undefined;

/** The source pages by the path VitePress gives them (`docs/source/store/mvcc/kvstore.md`). */
let byPath: { pages: SourcePage[]; map: Map<string, SourcePage> } | undefined;
function sourcePagesByPath(): Map<string, SourcePage> {
  const pages = sourcePages(srcDir);
  if (byPath?.pages !== pages)
    byPath = { pages, map: new Map(pages.map((p) => [`${p.url.slice(1)}.md`, p])) };
  return byPath.map;
}

/**
 * The search sections of an annotated-source page, which has no markdown file (see search.ts);
 * undefined for every other page, which VitePress then splits itself.
 */
function sourcePageSections(file: string) {
  const relativePath = file
    .slice(srcDir.length + 1)
    .split("\\")
    .join("/");
  if (!relativePath.startsWith("docs/source/") || existsSync(file) || !siteMarkdown) return undefined;
  const page = sourcePagesByPath().get(relativePath);
  if (!page) return undefined;
  return pageSections(
    renderForSearch(page.markdown, { path: file, relativePath, cleanUrls: false }, siteMarkdown),
  );
}

function sidebar(): DefaultTheme.SidebarItem[] {
  return [
    {
      text: "Chapters",
      items: listChapters(srcDir).map((c) => ({
        text: `${c.number}. ${c.title}`,
        link: `/chapters/${c.dir}/`,
      })),
    },
    {
      text: "Reference",
      items: [
        { text: "Getting started", link: "/docs/getting-started" },
        { text: "Architecture", link: "/docs/architecture" },
        { text: "The live cluster view", link: "/docs/cluster-view" },
        { text: "Performance", link: "/docs/performance" },
        { text: "How grading works", link: "/docs/grading" },
        { text: "Glossary", link: "/docs/glossary" },
        { text: "Upstream map", link: "/docs/upstream-map" },
        { text: "Read the code", link: "/docs/source/" },
      ],
    },
  ];
}

export default defineConfig({
  title: "Kubernetes Under the Hood",
  description: "Read, run and rebuild a working miniature of the Kubernetes control plane.",
  srcDir,
  srcExclude: [
    "code/**",
    "exercises/**",
    "solutions/**",
    "README.md",
    "CONTRIBUTING.md",
    "**/node_modules/**",
  ],
  lastUpdated: false,
  // Annotated source pages quote flag defaults such as http://localhost:2379; those are not site links.
  ignoreDeadLinks: "localhostLinks",
  appearance: true,
  head: [
    ["link", { rel: "icon", href: "data:," }],
    ["style", { id: "code-colours" }, highlighting.css],
  ],
  markdown: {
    config: (md) => {
      siteMarkdown = md;
      snippetChecks(md, srcDir);
      snippetCaptions(md, srcDir, sourceUrl);
      diagramFences(md);
    },
    shikiSetup: highlighting.shikiSetup as never,
  },
  transformPageData(pageData) {
    // The "see the code" footer lists the page's own source and every code file it embeds.
    // Dynamic pages (docs/source/…) have no file of their own; their params name the code file.
    const path = resolve(srcDir, pageData.relativePath);
    const source = existsSync(path) ? readFileSync(path, "utf8") : "";
    const files = [...new Set(findSnippetRefs(source).map((r) => r.file))];
    pageData.frontmatter.codeFiles = files.map((file) => ({ file, url: sourceUrl(file) }));
  },
  themeConfig: {
    nav: [
      { text: "Start", link: "/docs/getting-started" },
      { text: "Chapters", link: "/chapters/00-life-of-a-pod/" },
      { text: "Architecture", link: "/docs/architecture" },
      { text: "Code", link: "/docs/source/" },
      { text: "Upstream map", link: "/docs/upstream-map" },
    ],
    sidebar: sidebar(),
    search: {
      provider: "local",
      options: {
        // (Typed against the root markdown-it types; the renderer is VitePress's own markdown-it.)
        _render: (src, env, md) => renderForSearch(src, env, md as unknown as MarkdownRenderer),
        miniSearch: {
          // Returning nothing leaves a page to VitePress's own splitter (`?? splitPageIntoSections`).
          _splitIntoSections: (file: string) => sourcePageSections(file) as never,
          // A heading that matches outranks body text that matches (VitePress: title 4, text 2):
          // with hundreds of source pages whose text says "pod", a search for a chapter's title
          // must still show the chapter among the 16 results the search box lists.
          searchOptions: { boost: { title: 12, text: 2, titles: 1 } },
        },
      },
    },
    outline: { level: [2, 3] },
    docFooter: { prev: "Previous", next: "Next" },
  },
  vite: {
    server: { port: 5173 },
    // Diagrams draw with mermaid's prebuilt build, copied as it is, instead of bundling mermaid's
    // thousands of modules on every build (see mermaid-runtime.ts).
    // (Typed against the root vite; VitePress 1 runs its own vite 5, with the same plugin hooks.)
    plugins: [mermaidFromDist() as never],
  },
});
