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
  /** The header's first line: `KeyIndex — every revision at which one key changed`. */
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
  const summary = lines.find((l) => l.trim() !== "")?.trim() ?? "";
  const header: FileHeader = { summary, upstream: [] };
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
