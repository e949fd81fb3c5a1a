/**
 * File headers of `code/`: what each file is, the upstream file it mirrors, the chapter that builds it.
 *
 * Solves: the upstream map (docs/upstream-map), the chapter pages' "Upstream" boxes and the
 * annotated-source pages all need "our file → upstream file". Keeping that fact in the file's own
 * header (one `@upstream` line per upstream file) means there is one source of truth, and a test
 * can demand it of every file.
 *
 * @upstream none — course tooling
 * @chapter 00-life-of-a-pod
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";

export interface UpstreamRef {
  /** `kubernetes/kubernetes`, `etcd-io/etcd`, … */
  repo: string;
  path: string;
  /** The main types and functions, as written in the header: `keyIndex, generation`. */
  names: string;
  url: string;
}

export interface FileHeader {
  /**
   * The header's first sentence, whole, as markdown: `KeyIndex — every revision at which one key
   * changed, grouped into generations.` (a sentence may run over several lines of the header).
   */
  summary: string;
  upstream: UpstreamRef[];
  /** Set when the header says `@upstream none — <why>`. */
  noUpstream?: string;
  chapter?: string;
}

/** The versions the course follows (Kubernetes v1.32, etcd v3.5); links point at these tags. */
const refs: Record<string, string> = {
  "kubernetes/kubernetes": "v1.32.0",
  "etcd-io/etcd": "v3.5.17",
};

export function upstreamUrl(repo: string, path: string): string {
  return `https://github.com/${repo}/blob/${refs[repo] ?? "HEAD"}/${path}`;
}

/** Parses the leading JSDoc block of a TypeScript file; undefined when there is none. */
export function parseHeader(source: string): FileHeader | undefined {
  const m = /^\s*\/\*\*([\s\S]*?)\*\//.exec(source);
  if (!m) return undefined;
  const lines = m[1].split("\n").map((l) => l.replace(/^\s*\* ?/, "").trimEnd());
  const header: FileHeader = { summary: firstSentence(firstParagraph(lines)), upstream: [] };
  for (const line of lines) {
    const none = /^@upstream\s+none\b\s*(?:[—-]+\s*)?(.*)$/.exec(line);
    if (none) {
      header.noUpstream = none[1].trim() || "no upstream counterpart";
      continue;
    }
    const up = /^@upstream\s+([\w.-]+\/[\w.-]+)\s+(\S+)\s*(?:\((.*)\))?\s*$/.exec(line);
    if (up)
      header.upstream.push({ repo: up[1], path: up[2], names: up[3] ?? "", url: upstreamUrl(up[1], up[2]) });
    const ch = /^@chapter\s+(\S+)/.exec(line);
    if (ch) header.chapter = ch[1];
  }
  return header;
}

/**
 * The header's first paragraph as one line: its lines up to a blank line, a tag (`@upstream`) or a
 * list (`- item`), joined with spaces.
 */
function firstParagraph(lines: string[]): string {
  const start = lines.findIndex((l) => l.trim() !== "");
  if (start < 0) return "";
  const out: string[] = [];
  for (const line of lines.slice(start)) {
    const t = line.trim();
    if (t === "" || t.startsWith("@") || (out.length > 0 && /^([-*]|\d+\.)\s/.test(t))) break;
    out.push(t);
  }
  return out.join(" ");
}

/** Words that end with a full stop without ending a sentence. */
const abbreviations = /(?:^|[\s(])(?:e\.g|i\.e|cf|vs|etc)\.$/i;

/**
 * The first sentence of a paragraph: up to the first `.`, `?` or `!` (with any closing quote or
 * bracket) that ends the paragraph or is followed by a space and a capital, a quote or inline code —
 * not one inside inline code (`kvstore.ts`), in a number or path (`v3.5`, `k8s.io`), or after `e.g.`.
 */
export function firstSentence(paragraph: string): string {
  let inCode = false;
  for (let i = 0; i < paragraph.length; i++) {
    const c = paragraph[i];
    if (c === "`") inCode = !inCode;
    if (inCode || !".?!".includes(c)) continue;
    let end = i + 1;
    while (end < paragraph.length && "\"'”’)]".includes(paragraph[end])) end++;
    const rest = paragraph.slice(end);
    if (rest.trim() === "") return paragraph.slice(0, end).trim();
    if (/^\s+[A-Z"“`(]/.test(rest) && !(c === "." && abbreviations.test(paragraph.slice(0, i + 1)))) {
      return paragraph.slice(0, end).trim();
    }
  }
  return paragraph.trim();
}

const escapeHtml = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");

/**
 * Inline markdown as HTML, for a header's summary shown by a page component: `code`, **strong**,
 * *emphasis* and [links](url); everything else is text (escaped). Not a whole markdown renderer —
 * headers' first sentences use no more than this.
 */
export function inlineMarkdown(text: string): string {
  return text
    .split(/(`[^`]*`)/)
    .map((part, i) => {
      if (i % 2 === 1) return `<code>${escapeHtml(part.slice(1, -1))}</code>`;
      return escapeHtml(part)
        .replace(
          /\[([^\]]+)\]\(([^)\s]+)\)/g,
          (_, label: string, url: string) => `<a href="${url.replace(/"/g, "&quot;")}">${label}</a>`,
        )
        .replace(/\*\*(\S(?:.*?\S)?)\*\*/g, "<strong>$1</strong>")
        .replace(/(^|[^*\w])\*(\S(?:.*?\S)?)\*(?![*\w])/g, "$1<em>$2</em>");
    })
    .join("");
}

/** Every non-test TypeScript file under `dir`, as paths relative to `base`, sorted. */
export function sourceFiles(base: string, dir = "code"): string[] {
  const out: string[] = [];
  const walk = (abs: string) => {
    for (const name of readdirSync(abs).sort()) {
      const p = join(abs, name);
      if (statSync(p).isDirectory()) {
        if (name !== "node_modules" && name !== "testdata") walk(p);
      } else if (name.endsWith(".ts") && !name.endsWith(".test.ts") && !name.endsWith(".d.ts")) {
        out.push(relative(base, p));
      }
    }
  };
  try {
    walk(join(base, dir));
  } catch {
    return [];
  }
  return out;
}

export interface MapRow extends FileHeader {
  file: string;
}

export function upstreamMap(base: string): MapRow[] {
  return sourceFiles(base).map((file) => {
    const header = parseHeader(readFileSync(join(base, file), "utf8"));
    return { file, summary: "", upstream: [], ...header };
  });
}
