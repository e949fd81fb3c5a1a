/**
 * Building and serving the course site from tests: `vitepress build` into a folder, and a static
 * file server that resolves clean URLs the way the deployed site does.
 *
 * @upstream none — course tooling
 * @chapter 00-life-of-a-pod
 */
import { spawn } from "node:child_process";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { extname, join, normalize, relative } from "node:path";
import { root } from "./course.ts";
import { sourcePages } from "./source-pages.ts";

export interface BuildResult {
  code: number;
  output: string;
  seconds: number;
}

/** Runs `vitepress build <siteRoot> --outDir <outDir>` in a child process. */
export function buildSite(siteRoot: string, outDir: string): Promise<BuildResult> {
  const started = Date.now();
  const child = spawn(
    process.execPath,
    [join(root, "node_modules", "vitepress", "bin", "vitepress.js"), "build", siteRoot, "--outDir", outDir],
    { cwd: siteRoot, env: { ...process.env, FORCE_COLOR: "0" }, stdio: ["ignore", "pipe", "pipe"] },
  );
  let output = "";
  child.stdout.on("data", (d) => {
    output += d;
  });
  child.stderr.on("data", (d) => {
    output += d;
  });
  return new Promise((resolve) =>
    child.on("close", (code) => resolve({ code: code ?? 1, output, seconds: (Date.now() - started) / 1000 })),
  );
}

/** The site's pages as source files relative to the root: `index.md`, `docs/x.md`, `chapters/NN/index.md`. */
export function sitePages(siteRoot = root): string[] {
  const pages: string[] = [];
  if (existsSync(join(siteRoot, "index.md"))) pages.push("index.md");
  for (const dir of ["docs", "chapters"]) {
    const walk = (abs: string) => {
      if (!existsSync(abs)) return;
      for (const name of readdirSync(abs).sort()) {
        const p = join(abs, name);
        if (statSync(p).isDirectory()) walk(p);
        else if (name.endsWith(".md")) pages.push(relative(siteRoot, p));
      }
    };
    walk(join(siteRoot, dir));
  }
  return pages;
}

export interface SitePage {
  /** The URL path, e.g. `/chapters/00-life-of-a-pod/`. */
  url: string;
  /** The built file, relative to the output folder. */
  html: string;
  /** The markdown the page is rendered from (for dynamic pages, the generated content). */
  markdown: string;
}

/** Every page the site must have: the markdown pages and the generated source pages. */
export function siteEntries(siteRoot = root): SitePage[] {
  const pages = sitePages(siteRoot).filter((p) => !p.includes("["));
  return [
    ...pages.map((p) => ({
      url: pageUrl(p),
      html: p.replace(/\.md$/, ".html"),
      markdown: readFileSync(join(siteRoot, p), "utf8"),
    })),
    ...sourcePages(siteRoot).map((p) => ({
      url: p.url,
      html: `${p.url.slice(1)}.html`,
      markdown: p.markdown,
    })),
  ];
}

/** The URL path VitePress serves a page at: `chapters/00-x/index.md` → `/chapters/00-x/`. */
export function pageUrl(page: string): string {
  return `/${page.replace(/(^|\/)index\.md$/, "$1").replace(/\.md$/, "")}`;
}

const types: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript",
  // Module scripts need a JavaScript type; mermaid's prebuilt build is `.mjs` files.
  ".mjs": "text/javascript",
  ".css": "text/css",
  ".svg": "image/svg+xml",
  ".json": "application/json",
  ".woff2": "font/woff2",
  ".png": "image/png",
};

/** Serves a built site on a free loopback port; `/x` finds `x.html` or `x/index.html`. */
export async function serveSite(dir: string): Promise<{ url: string; server: Server }> {
  const server = createServer((req, res) => {
    const path = normalize(decodeURIComponent(new URL(req.url ?? "/", "http://x").pathname));
    const candidates = [join(dir, path), join(dir, `${path}.html`), join(dir, path, "index.html")];
    const file = candidates.find((c) => c.startsWith(dir) && existsSync(c) && statSync(c).isFile());
    if (!file) {
      res.writeHead(404, { "content-type": "text/plain" }).end("not found");
      return;
    }
    // Built assets have content hashes in their names (mermaid's files are its own, by version), so
    // they may be cached as a deployment would: a browser then compiles the app's scripts once,
    // not once per page it opens.
    const immutable = /^\/(assets|mermaid)\//.test(path);
    res.writeHead(200, {
      "content-type": types[extname(file)] ?? "application/octet-stream",
      ...(immutable ? { "cache-control": "public, max-age=31536000, immutable" } : {}),
    });
    res.end(readFileSync(file));
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, server };
}
