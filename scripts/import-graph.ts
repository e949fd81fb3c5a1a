/**
 * Import graph — who imports whom in `code/`, read from the source text, so a test can keep the
 * layering DESIGN.md sets (upstream's process boundaries) and forbid import circles.
 *
 * Solves:
 * - an import circle (type-only imports included) means two files are one concept in disguise, or
 *   a lower layer calls up into a higher one (the MVCC store into the request layer); either way a
 *   reader can no longer read the files bottom-up, as the chapters present them;
 * - a component that imports the API server's internals instead of talking HTTP would pass every
 *   test and still not be a Kubernetes component.
 *
 * Reads `import … from "./x.ts"`, `import type …`, `export … from` and `import("./x.ts")` with a
 * relative specifier; package imports (`node:fs`, `yaml`) are not edges.
 *
 * @upstream none — course tooling (upstream keeps its layering with import-boss and
 *   hack/verify-imports.sh in kubernetes/kubernetes)
 * @chapter 00-life-of-a-pod
 */
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";

/** Edges keyed by repository-relative path: file → the files it imports. */
export type ImportGraph = Map<string, string[]>;

const specifiers = [
  /(?:^|[\s;])(?:import|export)\s+(?:type\s+)?(?:[\w*{}\s,$]+?\s+from\s+)?["'](\.{1,2}\/[^"']+)["']/g,
  /\bimport\(\s*["'](\.{1,2}\/[^"']+)["']\s*\)/g,
];

/** Every `.ts` file under `dir` (relative to `root`), tests left out unless `withTests`. */
export function sourceFiles(root: string, dir: string, withTests = false): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) {
        if (e.name !== "node_modules") walk(p);
      } else if (e.name.endsWith(".ts") && !e.name.endsWith(".d.ts")) {
        if (withTests || !e.name.endsWith(".test.ts")) out.push(relative(root, p));
      }
    }
  };
  walk(join(root, dir));
  return out.sort();
}

/** Strips comments so an import shown in a doc comment is not an edge. */
function withoutComments(src: string): string {
  return src.replace(/\/\*[\s\S]*?\*\//g, "").replace(/(^|[^:"'`])\/\/.*$/gm, "$1");
}

export function importGraph(root: string, files: readonly string[]): ImportGraph {
  const graph: ImportGraph = new Map();
  for (const file of files) {
    const src = withoutComments(readFileSync(join(root, file), "utf8"));
    const deps = new Set<string>();
    for (const re of specifiers) {
      for (const m of src.matchAll(re)) deps.add(relative(root, resolve(root, dirname(file), m[1])));
    }
    graph.set(file, [...deps].sort());
  }
  return graph;
}

/** The import circles: strongly connected components of more than one file, or a file importing itself. */
export function importCycles(graph: ImportGraph): string[][] {
  // Tarjan's algorithm, iterative so a deep chain of imports cannot overflow the stack.
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const cycles: string[][] = [];
  for (const start of graph.keys()) {
    if (index.has(start)) continue;
    const work: { node: string; edge: number }[] = [{ node: start, edge: 0 }];
    index.set(start, next);
    low.set(start, next++);
    stack.push(start);
    onStack.add(start);
    while (work.length) {
      const top = work[work.length - 1];
      const edges = (graph.get(top.node) ?? []).filter((d) => graph.has(d));
      if (top.edge < edges.length) {
        const to = edges[top.edge++];
        if (!index.has(to)) {
          index.set(to, next);
          low.set(to, next++);
          stack.push(to);
          onStack.add(to);
          work.push({ node: to, edge: 0 });
        } else if (onStack.has(to)) {
          low.set(top.node, Math.min(low.get(top.node)!, index.get(to)!));
        }
        continue;
      }
      work.pop();
      if (work.length) {
        const parent = work[work.length - 1].node;
        low.set(parent, Math.min(low.get(parent)!, low.get(top.node)!));
      }
      if (low.get(top.node) === index.get(top.node)) {
        const component: string[] = [];
        let n: string;
        do {
          n = stack.pop()!;
          onStack.delete(n);
          component.push(n);
        } while (n !== top.node);
        const selfLoop = component.length === 1 && (graph.get(n) ?? []).includes(n);
        if (component.length > 1 || selfLoop) cycles.push(component.sort());
      }
    }
  }
  return cycles;
}

/** A layering rule: files under `from` must not import files under any of `mayNot`. */
export interface ImportRule {
  from: string;
  mayNot: string[];
  why: string;
}

/** Every edge that breaks a rule, as `file → imported (why)`. */
export function ruleViolations(graph: ImportGraph, rules: readonly ImportRule[]): string[] {
  const out: string[] = [];
  for (const [file, deps] of graph) {
    for (const rule of rules) {
      if (!file.startsWith(rule.from)) continue;
      for (const dep of deps) {
        if (rule.mayNot.some((p) => dep.startsWith(p))) out.push(`${file} → ${dep} (${rule.why})`);
      }
    }
  }
  return out;
}
