/**
 * The course site: VitePress with its source at the repository root.
 *
 * Pages are `index.md`, `docs/*.md` and `chapters/NN-slug/index.md`; the code, exercises and
 * solutions are not pages (chapters embed the code with snippet imports instead). The sidebar is
 * built from the chapters folder, so a new chapter appears without editing this file.
 *
 * @upstream none — course tooling
 * @chapter 00-life-of-a-pod
 */
import { existsSync, readFileSync } from "node:fs";
import { resolve } from "node:path";
import type { DefaultTheme } from "vitepress";
import { withMermaid } from "vitepress-plugin-mermaid";
import { listChapters } from "../scripts/course.ts";
import { sourceUrl } from "../scripts/source-pages.ts";
import { findSnippetRefs, snippetChecks } from "./snippets.ts";

const srcDir = resolve(import.meta.dirname, "..");

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
        { text: "How grading works", link: "/docs/grading" },
        { text: "Glossary", link: "/docs/glossary" },
        { text: "Upstream map", link: "/docs/upstream-map" },
        { text: "Read the code", link: "/docs/source/" },
      ],
    },
  ];
}

export default withMermaid({
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
  head: [["link", { rel: "icon", href: "data:," }]],
  markdown: {
    config: (md) => snippetChecks(md, srcDir),
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
    search: { provider: "local" },
    outline: { level: [2, 3] },
    docFooter: { prev: "Previous", next: "Next" },
  },
  mermaid: {},
  vite: {
    server: { port: 5173 },
  },
});
