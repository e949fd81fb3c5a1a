/**
 * Serves mermaid's prebuilt ES module build as static files of the site (`/mermaid/…`), which
 * mermaid-runtime.ts loads in the browser.
 *
 * Solves: see mermaid-runtime.ts — the build no longer bundles mermaid, it copies mermaid's own
 * `dist/mermaid.esm.min.mjs` and the chunks it imports (without source maps) into the output, and
 * the dev server serves the same files from node_modules.
 *
 * Invariants:
 * - every file the prebuilt build can import (its chunks import each other, and diagrams load
 *   lazily) is in the output: the whole `chunks/mermaid.esm.min/` folder is copied;
 * - the files are copied in the client build only (the server build never draws a diagram).
 *
 * @upstream none — course tooling (a Vite plugin)
 * @chapter 00-life-of-a-pod
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, normalize } from "node:path";
import type { Plugin } from "vite";
import { mermaidPath } from "./mermaid-runtime.ts";

/** mermaid's prebuilt ES module files, relative to its dist/ folder. */
export function mermaidDistFiles(): { dist: string; files: string[] } {
  const dist = join(dirname(createRequire(import.meta.url).resolve("mermaid/package.json")), "dist");
  const chunks = "chunks/mermaid.esm.min";
  const files = [
    "mermaid.esm.min.mjs",
    ...readdirSync(join(dist, chunks))
      .filter((f) => f.endsWith(".mjs"))
      .sort()
      .map((f) => `${chunks}/${f}`),
  ];
  return { dist, files };
}

export function mermaidFromDist(): Plugin {
  const { dist, files } = mermaidDistFiles();
  const folder = dirname(mermaidPath); // "mermaid"
  let ssr = false;
  return {
    name: "course:mermaid-from-dist",
    configResolved(config) {
      ssr = Boolean(config.build.ssr);
    },
    configureServer(server) {
      server.middlewares.use(`/${folder}/`, (req, res, next) => {
        const path = normalize(decodeURIComponent((req.url ?? "").split("?")[0])).replace(/^\/+/, "");
        const file = join(dist, path);
        if (!file.startsWith(dist) || !path.endsWith(".mjs") || !existsSync(file)) return next();
        res.setHeader("content-type", "text/javascript");
        res.end(readFileSync(file));
      });
    },
    generateBundle() {
      if (ssr) return;
      for (const f of files) {
        this.emitFile({ type: "asset", fileName: `${folder}/${f}`, source: readFileSync(join(dist, f)) });
      }
    },
  };
}
