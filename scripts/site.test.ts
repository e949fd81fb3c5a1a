import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import type { Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Browser, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { courseMap } from "../.vitepress/course-plan.ts";
import { findSnippetRefs } from "../.vitepress/snippets.ts";
import { listChapters, root } from "./course.ts";
import { describeWithTools } from "./external-tools.ts";
import { sourceFiles } from "./headers.ts";
import { type BuildResult, buildSite, serveSite, siteEntries } from "./site.ts";
import { isTestingFile, sourcePages, sourceUrl } from "./source-pages.ts";

const outDir = mkdtempSync(join(tmpdir(), "course-site-"));
let build: BuildResult;

beforeAll(async () => {
  build = await buildSite(root, outDir);
  console.log(`site build: exit ${build.code} in ${build.seconds.toFixed(1)} s`);
  // The build takes about 100 s alone; beside another test file on two cores (npm test runs two
  // at once) it can take three times that.
}, 900_000);
afterAll(() => rmSync(outDir, { recursive: true, force: true }));

describe("the course site", () => {
  it("builds", () => {
    expect(build.code, build.output.slice(-3000)).toBe(0);
  });

  it("has an HTML page for every markdown page and every file of code/", () => {
    const entries = siteEntries();
    expect(entries.filter((e) => e.url.startsWith("/docs/source/")).length).toBeGreaterThan(0);
    for (const page of entries) {
      expect(() => readFileSync(join(outDir, page.html)), `${page.url} → ${page.html}`).not.toThrow();
    }
  });

  it("has no internal link that leads nowhere", () => {
    // Every href="/…" in every built page (sidebar, nav, prose, source-page neighbours, upstream
    // boxes) must name a built page or asset. Checked on the HTML, so it needs no browser.
    const htmlFiles: string[] = [];
    const walk = (dir: string) => {
      for (const e of readdirSync(dir, { withFileTypes: true })) {
        const p = join(dir, e.name);
        if (e.isDirectory()) walk(p);
        else if (e.name.endsWith(".html")) htmlFiles.push(p);
      }
    };
    walk(outDir);
    const broken = new Set<string>();
    let checked = 0;
    for (const file of htmlFiles) {
      const html = readFileSync(file, "utf8");
      for (const m of html.matchAll(/href="(\/[^"#?]*)/g)) {
        const path = decodeURIComponent(m[1]);
        checked++;
        const candidates = [
          join(outDir, path),
          join(outDir, `${path}.html`),
          join(outDir, path, "index.html"),
        ];
        if (!candidates.some((c) => existsSync(c) && !c.endsWith("/"))) {
          broken.add(`${path} (on ${file.slice(outDir.length)})`);
        }
      }
    }
    console.log(`internal links: ${checked} checked in ${htmlFiles.length} pages, ${broken.size} broken`);
    expect(checked).toBeGreaterThan(100);
    expect([...broken]).toEqual([]);
  });

  it("opens every chapter with its at-a-glance box, a diagram and an Upstream box", () => {
    for (const chapter of listChapters(root)) {
      const page = readFileSync(join(root, "chapters", chapter.dir, "index.md"), "utf8");
      const glance = /::: info Chapter \d+ at a glance\n([\s\S]*?)\n:::/.exec(page)?.[1] ?? "";
      expect(page.indexOf("at a glance"), `${chapter.dir}: the box comes first`).toBeLessThan(200);
      for (const item of [
        /\*\*You will (build|learn):\*\*/,
        /\*\*Time:\*\*/,
        /\*\*Run:\*\*/,
        /\*\*Exercises?:\*\*/,
        /\*\*Status\*\*/,
      ]) {
        expect(glance, `${chapter.dir}: at-a-glance box lacks ${item}`).toMatch(item);
      }
      expect(page, `${chapter.dir}: a mermaid diagram`).toMatch(/^```mermaid$/m);
      expect(page, `${chapter.dir}: an Upstream box from the headers`).toContain(
        `<UpstreamBox chapter="${chapter.dir}" />`,
      );
    }
  });

  it("says which chapters exist and which are coming, as the chapters/ folder has it", () => {
    const existing = new Set(listChapters(root).map((c) => c.number));
    const map = courseMap(root);
    for (const row of map) {
      expect(row.status, `chapter ${row.number}`).toBe(existing.has(row.number) ? "available" : "coming");
    }
    expect(map.filter((r) => r.status === "coming").length, "the plan runs to chapter 8").toBe(
      9 - existing.size,
    );
    // The pages that present the course show the generated map, and their own words never call a
    // chapter with no folder anything but coming, nor one with a folder coming.
    const read = (page: string) => readFileSync(join(root, page), "utf8");
    const mapSection = /^## Map of the course\n([\s\S]*?)^## /m.exec(
      read("chapters/00-life-of-a-pod/index.md"),
    )?.[1];
    const texts = {
      "index.md": read("index.md"),
      "docs/getting-started.md": read("docs/getting-started.md"),
      "chapters/00-life-of-a-pod/index.md (Map of the course)": mapSection ?? "",
    };
    for (const [page, text] of Object.entries(texts)) {
      expect(text, `${page} shows <CourseMap/>`).toMatch(/<CourseMap\b/);
      for (const sentence of text.split(/(?<=[.!?])\s+(?=[A-Z`([])|\n\s*\n|\|/)) {
        for (const m of sentence.matchAll(/\bchapters?\s+(\d+)\b/gi)) {
          const n = Number(m[1]);
          if (existing.has(n)) {
            expect(sentence, `${page} calls chapter ${n} coming, but it exists`).not.toMatch(
              new RegExp(`chapter ${n} \\(coming\\)|coming in chapter ${n}\\b`, "i"),
            );
          } else {
            expect(sentence, `${page} speaks of chapter ${n}, which is not written`).toMatch(
              /coming|not written/i,
            );
          }
        }
      }
    }
    // The landing page's hero and feature cards name no component of a chapter still to come.
    const front = /^---\n([\s\S]*?)\n---/.exec(texts["index.md"])?.[1].toLowerCase() ?? "";
    for (const row of map.filter((r) => r.status === "coming")) {
      for (const term of row.terms) {
        expect(front, `the landing page promises "${term}" (chapter ${row.number}, coming)`).not.toContain(
          term.toLowerCase(),
        );
      }
    }
    // Getting started's layout marks a folder of code/ "coming" exactly when it is not there.
    const layout = /```text\n([\s\S]*?)```/.exec(texts["docs/getting-started.md"])?.[1] ?? "";
    const folders = [...layout.matchAll(/^ {2}([a-z0-9-]+)\/\s+(.*)$/gm)];
    expect(folders.length).toBeGreaterThan(5);
    for (const [, dir, description] of folders) {
      const exists = existsSync(join(root, "code", dir));
      expect(description.startsWith("coming"), `code/${dir}/ ${exists ? "exists" : "does not exist"}`).toBe(
        !exists,
      );
    }
  });

  it("fails to build when a page embeds a region that does not exist", async () => {
    // Minimal sites that install the same snippet check as the real one (config.ts calls snippetChecks):
    // one whose page embeds a real region, one whose page embeds a missing one, built side by side.
    // Inside the repository, so the temporary sites resolve vitepress and vue from our node_modules.
    mkdirSync(join(root, ".test-results"), { recursive: true });
    const makeSite = (page: string) => {
      const site = mkdtempSync(join(root, ".test-results", "bogus-site-"));
      mkdirSync(join(site, ".vitepress"));
      mkdirSync(join(site, "code"));
      writeFileSync(join(site, "code", "x.ts"), "// #region real\nexport const x = 1;\n// #endregion real\n");
      writeFileSync(
        join(site, ".vitepress", "config.mts"),
        `import { snippetChecks } from ${JSON.stringify(join(root, ".vitepress", "snippets.ts"))};\n` +
          `export default { markdown: { config: (md) => snippetChecks(md, ${JSON.stringify(site)}) } };\n`,
      );
      writeFileSync(join(site, "index.md"), page);
      return site;
    };
    const goodSite = makeSite("# ok\n\n<<< @/code/x.ts#real\n");
    const badSite = makeSite("# bogus\n\n<<< @/code/x.ts#bogus\n");
    try {
      const [good, bad] = await Promise.all([
        buildSite(goodSite, join(goodSite, "dist")),
        buildSite(badSite, join(badSite, "dist")),
      ]);
      expect(good.code, good.output.slice(-2000)).toBe(0);
      expect(readFileSync(join(goodSite, "dist", "index.html"), "utf8")).toContain("x");

      expect(bad.code).not.toBe(0);
      expect(bad.output).toMatch(
        /index\.md:3: <<< @\/code\/x\.ts#bogus: region "bogus" is not in code\/x\.ts/,
      );
    } finally {
      rmSync(goodSite, { recursive: true, force: true });
      rmSync(badSite, { recursive: true, force: true });
    }
  }, 120_000);
});

describeWithTools("the course site in a browser", ["chromium"], (tools) => {
  let browser: Browser;
  let server: Server;
  let base: string;
  const idleTabs: Page[] = [];
  const waitingForTab: ((tab: Page) => void)[] = [];
  /** Console errors and page errors of a pooled tab since it was last handed out. */
  const tabErrors = new WeakMap<Page, string[]>();
  const acquireTab = (): Promise<Page> =>
    idleTabs.length ? Promise.resolve(idleTabs.pop()!) : new Promise((r) => waitingForTab.push(r));
  const releaseTab = (tab: Page) => {
    const next = waitingForTab.shift();
    if (next) next(tab);
    else idleTabs.push(tab);
  };

  beforeAll(async () => {
    expect(build.code, "the site must build first").toBe(0);
    ({ url: base, server } = await serveSite(outDir));
    browser = await chromium.launch({
      executablePath: tools.chromium.path,
      args: [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--no-first-run",
        "--disable-background-networking",
      ],
    });
    for (let i = 0; i < 4; i++) {
      const tab = await browser.newPage();
      const errors: string[] = [];
      tabErrors.set(tab, errors);
      tab.on("console", (msg) => {
        if (msg.type() === "error" && !/favicon/i.test(msg.text())) errors.push(msg.text());
      });
      tab.on("pageerror", (err) => errors.push(String(err)));
      idleTabs.push(tab);
    }
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    server?.close();
  });

  for (const page of siteEntries()) {
    it.concurrent(`renders ${page.url} with no console errors, every diagram and every snippet`, async () => {
      const source = page.markdown;
      const diagrams = (source.match(/^```mermaid\s*$/gm) ?? []).length;
      const snippets = findSnippetRefs(source).length;
      // A tab from the pool: opening and closing a tab per page costs more than the page itself.
      const tab = await acquireTab();
      const errors = tabErrors.get(tab)!;
      errors.length = 0;
      try {
        const res = await tab.goto(base + page.url, { waitUntil: "load" });
        expect(res?.status()).toBe(200);
        if (diagrams > 0) {
          // Wait for the final drawing: every diagram an SVG, none of them mermaid's error diagram.
          const settled = await tab
            .waitForFunction(
              (n) => {
                const svgs = [...document.querySelectorAll(".mermaid svg")];
                return (
                  svgs.length >= n && svgs.every((s) => s.getAttribute("aria-roledescription") !== "error")
                );
              },
              diagrams,
              // mermaid draws a page's diagrams one after another: a page of eleven, loaded while
              // other pages load beside it, needs more than a page of two (within the 60 s test).
              { timeout: Math.min(50_000, Math.max(20_000, 4_000 * diagrams)) },
            )
            .then(() => true)
            .catch(() => false);
          const rendered = await tab.$$eval(".mermaid svg", (svgs) =>
            svgs.map((s) => s.getAttribute("aria-roledescription") ?? ""),
          );
          expect(
            rendered.filter((r) => r === "error"),
            "mermaid drew a syntax-error diagram",
          ).toEqual([]);
          expect(rendered.length, "every mermaid block renders to an SVG").toBe(diagrams);
          expect(settled).toBe(true);
        }
        const blocks = await tab.$$eval("div[class*='language-'] pre code", (codes) =>
          codes.map((c) => (c.textContent ?? "").trim().length),
        );
        expect(blocks.length).toBeGreaterThanOrEqual(snippets);
        expect(blocks.filter((n) => n === 0).length, "empty code blocks").toBe(0);
        // Every embedded block says where it comes from, and links that file's annotated page.
        const captions = await tab.$$eval(".snippet-source", (els) =>
          els.map((e) => ({
            text: e.textContent ?? "",
            href: e.querySelector("a")?.getAttribute("href") ?? null,
            next: e.nextElementSibling?.className ?? "",
          })),
        );
        const refs = findSnippetRefs(source);
        expect(captions.length, "a caption above every embedded block").toBe(refs.length);
        refs.forEach((ref, i) => {
          const caption = captions[i];
          const where = `line ${ref.line}: <<< @/${ref.file}#${ref.region}`;
          expect(caption.text, where).toContain(ref.file);
          if (ref.region) expect(caption.text, where).toContain(`#${ref.region}`);
          expect(caption.next, `${where}: the caption sits right above its block`).toMatch(/language-/);
          if (ref.file.startsWith("code/")) {
            const url = sourceUrl(ref.file);
            expect(url, `${where}: the file has an annotated page`).toBeDefined();
            expect(caption.href, where).toBe(url);
            expect(existsSync(join(outDir, `${url}.html`)), `${where}: ${url} is built`).toBe(true);
          }
        });
        // A table's header row says what its columns are; an empty one is a table that should not be.
        const emptyHeaders = await tab.$$eval(
          "table thead tr",
          (rows) =>
            rows.filter((r) => ![...r.querySelectorAll("th")].some((c) => (c.textContent ?? "").trim()))
              .length,
        );
        expect(emptyHeaders, "tables with an empty header row").toBe(0);
        expect(errors).toEqual([]);
      } finally {
        releaseTab(tab);
      }
    }, 60_000);
  }

  // Every diagram of every page, as a reader sees it: in light and dark mode at 1280 px, and on a
  // phone. A label whose text spills out of its box is clipped (a foreignObject cuts it off) or
  // runs over the box's edge; text drawn smaller than ~9 px cannot be read unless the diagram can
  // be opened at full size.
  const diagramPages = siteEntries().filter((p) => /^```mermaid\s*$/m.test(p.markdown));
  const modes = [
    { name: "light-1280", viewport: { width: 1280, height: 800 }, colorScheme: "light" },
    { name: "dark-1280", viewport: { width: 1280, height: 800 }, colorScheme: "dark" },
    { name: "light-390", viewport: { width: 390, height: 844 }, colorScheme: "light" },
  ] as const;
  const minReadablePx = 9;
  for (const mode of modes) {
    it(`draws every diagram legibly (${mode.name}): every label inside its box, no text under ${minReadablePx} px without a full-size view`, async () => {
      const shots = join(root, ".test-results", "screenshots", "diagrams");
      mkdirSync(shots, { recursive: true });
      const context = await browser.newContext({ viewport: mode.viewport, colorScheme: mode.colorScheme });
      const tab = await context.newPage();
      const problems: string[] = [];
      let measured = 0;
      try {
        for (const page of diagramPages) {
          const expected = (page.markdown.match(/^```mermaid\s*$/gm) ?? []).length;
          await tab.goto(base + page.url, { waitUntil: "load" });
          await tab.waitForFunction((n) => document.querySelectorAll(".mermaid svg").length >= n, expected, {
            timeout: 20_000,
          });
          // The drawing settles (a diagram is sized to its column once drawn) before it is measured.
          await tab.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
          expect(await tab.evaluate(() => document.documentElement.classList.contains("dark"))).toBe(
            mode.colorScheme === "dark",
          );
          const reports = await tab.evaluate(measureDiagrams, ".mermaid");
          expect(reports.length, page.url).toBe(expected);
          for (const r of reports) {
            measured++;
            const where = `${page.url} diagram ${r.index + 1} (${r.kind})`;
            console.log(
              `${mode.name} ${where}: ${r.labels} labels, text ${r.minTextPx.toFixed(1)} px as drawn ` +
                `(${r.naturalMinTextPx} px at full size), ${r.fullSize ? "full-size view offered" : "no full-size view"}`,
            );
            for (const o of r.overflowing) problems.push(`${where}: label overflows its box: ${o}`);
            if (r.labels === 0) problems.push(`${where}: no labels found to measure`);
            if (r.minTextPx < minReadablePx && !r.fullSize) {
              problems.push(`${where}: text drawn at ${r.minTextPx.toFixed(1)} px and no full-size view`);
            }
            const figure = tab.locator(".mermaid").nth(r.index);
            await figure.scrollIntoViewIfNeeded();
            const slug = page.url.replace(/\W+/g, "-").replace(/^-|-$/g, "");
            await figure.screenshot({ path: join(shots, `${slug}-${r.index + 1}-${mode.name}.png`) });
            if (r.fullSize) {
              // The full-size view: the same diagram, every label whole, text at its natural size.
              await tab.locator(".diagram").nth(r.index).locator(".diagram-open").click();
              const dialog = tab.locator("dialog[open] .diagram-full");
              await dialog.waitFor({ timeout: 5_000 });
              const [full] = await tab.evaluate(measureDiagrams, "dialog[open] .diagram-full");
              for (const o of full.overflowing)
                problems.push(`${where}, full size: label overflows its box: ${o}`);
              if (full.minTextPx < 12) {
                problems.push(`${where}, full size: text drawn at ${full.minTextPx.toFixed(1)} px`);
              }
              await tab.keyboard.press("Escape");
              await tab.locator("dialog[open]").waitFor({ state: "detached", timeout: 5_000 });
            }
          }
        }
        if (mode.name === "light-1280") {
          // Switching the colour scheme redraws every diagram of the page, again with every label whole.
          const before = await tab.$$eval(".mermaid svg", (svgs) => svgs.map((s) => s.id));
          await tab.locator(".VPNavBar .VPSwitchAppearance").first().click();
          await tab.waitForFunction(
            (ids) => {
              const now = [...document.querySelectorAll(".mermaid svg")].map((s) => s.id);
              return now.length === ids.length && now.every((id, i) => id !== ids[i]);
            },
            before,
            { timeout: 20_000 },
          );
          expect(await tab.evaluate(() => document.documentElement.classList.contains("dark"))).toBe(true);
          for (const r of await tab.evaluate(measureDiagrams, ".mermaid")) {
            for (const o of r.overflowing)
              problems.push(`after switching to dark, diagram ${r.index + 1}: ${o}`);
          }
        }
      } finally {
        await context.close();
      }
      console.log(`diagram screenshots in ${shots}`);
      expect(measured).toBeGreaterThan(0);
      expect(problems).toEqual([]);
    }, 120_000);
  }

  it("finds the annotated source pages with the local search, by their prose and by their code", async () => {
    const page = sourcePages(root).find((p) => p.file.endsWith("/watchable-store.ts"))!;
    // A word of the file's code that no chapter or doc page uses: only an index that holds the
    // source pages' code can find it.
    const pagesText = siteEntries()
      .filter((e) => !e.url.startsWith("/docs/source/"))
      .map((e) => e.markdown)
      .join("\n");
    const codeOnly = [...new Set(page.markdown.match(/\b[a-z][a-zA-Z]{9,}\b/g) ?? [])].find(
      (w) => !pagesText.includes(w),
    );
    expect(codeOnly, "a word only the code uses").toBeDefined();
    const tab = await browser.newPage();
    try {
      await tab.goto(`${base}/`, { waitUntil: "load" });
      for (const term of ["syncWatchers", codeOnly!]) {
        await tab.locator(".VPNavBarSearch button").first().click();
        const input = tab.locator(".VPLocalSearchBox input");
        await input.waitFor({ timeout: 10_000 });
        await input.fill(term);
        const hit = tab.locator(
          `.VPLocalSearchBox a[href^="${page.url}.html"], .VPLocalSearchBox a[href^="${page.url}#"]`,
        );
        const found = await hit
          .first()
          .waitFor({ timeout: 10_000 })
          .then(() => true)
          .catch(() => false);
        const results = await tab.$$eval(".VPLocalSearchBox a[href]", (as) =>
          as.map((a) => a.getAttribute("href")),
        );
        expect(found, `searching "${term}" lists ${page.url}; it listed ${results.join(", ")}`).toBe(true);
        await tab.keyboard.press("Escape");
      }
    } finally {
      await tab.close();
    }
  }, 60_000);

  it("shows whole-sentence summaries, as markdown, on Read the code and the upstream map", async () => {
    const tab = await browser.newPage();
    try {
      for (const [url, selector] of [
        ["/docs/source/", ".vp-doc h2 + ul > li"],
        ["/docs/upstream-map", ".upstream-group tbody tr > td:nth-child(2)"],
      ] as const) {
        await tab.goto(base + url, { waitUntil: "load" });
        const summaries = await tab.$$eval(selector, (els) =>
          els.map((e) => {
            const text = (e.textContent ?? "").trim();
            const at = text.indexOf(" — ");
            return {
              text: e.tagName === "LI" && at >= 0 ? text.slice(at + 3) : text,
              code: e.querySelectorAll("code").length - (e.tagName === "LI" ? 1 : 0),
            };
          }),
        );
        expect(summaries.length, url).toBeGreaterThan(50);
        const cut = summaries.filter((s) => !/[.?!:]["”’)]*$/.test(s.text)).map((s) => s.text);
        expect(cut, `${url}: summaries that stop mid-sentence`).toEqual([]);
        const raw = summaries.filter((s) => s.text.includes("`")).map((s) => s.text);
        expect(raw, `${url}: summaries showing raw backticks`).toEqual([]);
        expect(
          summaries.filter((s) => s.code > 0).length,
          `${url}: inline code shown as code`,
        ).toBeGreaterThan(10);
      }
    } finally {
      await tab.close();
    }
  }, 60_000);

  it("leaves testing/ folders out of the learner's lists, and lists them apart on the upstream map", async () => {
    const harnesses = sourceFiles(root).filter(isTestingFile);
    const tab = await browser.newPage();
    try {
      await tab.goto(`${base}/docs/source/`, { waitUntil: "load" });
      const listed = await tab.$$eval(".vp-doc a[href^='/docs/source/']", (as) =>
        as.map((a) => a.getAttribute("href")),
      );
      expect(listed.length).toBeGreaterThan(50);
      expect(listed.filter((h) => h?.includes("/testing/"))).toEqual([]);
      await tab.goto(`${base}/docs/upstream-map`, { waitUntil: "load" });
      const rows = await tab.$$eval(".upstream-group", (groups) =>
        groups.map((g) => ({
          id: g.querySelector("h2")?.id ?? "",
          files: [...g.querySelectorAll("tbody tr > td:first-child")].map((td) =>
            (td.textContent ?? "").trim(),
          ),
        })),
      );
      const harnessGroup = rows.find((g) => g.id === "testing");
      for (const g of rows.filter((r) => r.id !== "testing")) {
        expect(
          g.files.filter((f) => isTestingFile(f)),
          `${g.id} lists a harness among the learner's files`,
        ).toEqual([]);
      }
      expect(harnessGroup?.files ?? []).toEqual(harnesses);
      for (const chapter of listChapters(root)) {
        await tab.goto(`${base}/chapters/${chapter.dir}/`, { waitUntil: "load" });
        const boxed = await tab.$$eval(".upstream-box tbody tr > td:first-child", (tds) =>
          tds.map((td) => td.textContent ?? ""),
        );
        expect(
          boxed.filter((f) => f.includes("testing/")),
          `${chapter.dir}'s Upstream box`,
        ).toEqual([]);
      }
      console.log(`testing/ files: ${harnesses.length} (${harnesses.join(", ") || "none yet"})`);
    } finally {
      await tab.close();
    }
  }, 60_000);

  it("shows the course map on the landing page, chapter 0 and getting started, from the chapters/ folder", async () => {
    const chapters = listChapters(root);
    const tab = await browser.newPage();
    try {
      for (const url of ["/", "/docs/getting-started", `/chapters/${chapters[0].dir}/`]) {
        await tab.goto(base + url, { waitUntil: "load" });
        const rows = await tab.$$eval(".course-map tbody tr", (trs) =>
          trs.map((tr) => ({
            number: Number(tr.querySelector("td")?.textContent),
            status: (tr.querySelector(".course-map-status")?.textContent ?? "").trim(),
            href: tr.querySelector("a")?.getAttribute("href") ?? null,
          })),
        );
        expect(
          rows.map((r) => r.number),
          url,
        ).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8]);
        for (const r of rows) {
          const chapter = chapters.find((c) => c.number === r.number);
          expect(r.status, `${url}: chapter ${r.number}`).toBe(chapter ? "available" : "coming");
          expect(r.href, `${url}: chapter ${r.number}`).toBe(chapter ? `/chapters/${chapter.dir}/` : null);
        }
      }
    } finally {
      await tab.close();
    }
  }, 60_000);

  it("finds a term from each chapter with the local search", async () => {
    const tab = await browser.newPage();
    try {
      await tab.goto(`${base}/`, { waitUntil: "load" });
      for (const chapter of listChapters(root)) {
        await tab.locator(".VPNavBarSearch button").first().click();
        const input = tab.locator(".VPLocalSearchBox input");
        await input.waitFor({ timeout: 10_000 });
        await input.fill(chapter.title);
        const hit = tab.locator(`.VPLocalSearchBox a[href*="/chapters/${chapter.dir}/"]`).first();
        await hit.waitFor({ timeout: 10_000 });
        await tab.keyboard.press("Escape");
      }
    } finally {
      await tab.close();
    }
  }, 60_000);

  it("fits a phone's width and leaves screenshots of the main kinds of page", async () => {
    const shots = join(root, ".test-results", "screenshots");
    mkdirSync(shots, { recursive: true });
    const chapters = listChapters(root);
    // Source pages whose facts are hardest to fit: the longest unbroken word (a path) and the most text.
    const longestWord = (p: { markdown: string }) =>
      Math.max(
        ...(
          p.markdown
            .replace(/<wbr>/g, "")
            .split("\n\n</div>")[0]
            .match(/[^\s,<>()[\]]+/g) ?? [""]
        ).map((w) => w.length),
      );
    const source = sourcePages(root);
    const widest = [...source].sort((a, b) => longestWord(b) - longestWord(a)).slice(0, 3);
    const kvstore = source.find((p) => p.file.endsWith("/kvstore.ts"))!;
    const sample = [
      { name: "landing", url: "/" },
      ...chapters.map((c) => ({ name: `chapter-${c.number}`, url: `/chapters/${c.dir}/` })),
      { name: "source-kvstore", url: kvstore.url },
      ...widest.map((p, i) => ({ name: `source-widest-${i + 1}`, url: p.url })),
    ];
    const overflowing: string[] = [];
    for (const [device, viewport] of [
      ["desktop", { width: 1440, height: 900 }],
      ["phone", { width: 390, height: 844 }],
    ] as const) {
      const tab = await browser.newPage({ viewport });
      try {
        for (const p of sample) {
          await tab.goto(base + p.url, { waitUntil: "load" });
          const extra = await tab.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
          if (device === "phone" && extra > 0) overflowing.push(`${p.url}: ${extra}px wider than the screen`);
          if (device === "phone" && p.name.startsWith("source")) {
            // The facts under the title wrap to the screen: no sideways scrolling inside them either.
            const facts = await tab.evaluate(() => {
              const el = document.querySelector(
                ".vp-doc h1 ~ :is(.source-facts, table)",
              ) as HTMLElement | null;
              if (!el) return "no facts";
              const right = Math.max(
                ...[...el.querySelectorAll("*")].map((c) => c.getBoundingClientRect().right),
              );
              return el.scrollWidth > el.clientWidth + 1 || right > window.innerWidth + 1
                ? `${el.scrollWidth - el.clientWidth}px wider than their box, reaching ${Math.round(right)}px`
                : "";
            });
            if (facts) overflowing.push(`${p.url} facts: ${facts}`);
          }
          if (p.name === "landing" || p.name === "chapter-1" || p.name.startsWith("source-")) {
            await tab.screenshot({ path: join(shots, `${p.name}-${device}.png`) });
          }
        }
      } finally {
        await tab.close();
      }
    }
    console.log(`screenshots in ${shots}`);
    expect(overflowing).toEqual([]);
  }, 120_000);
});

/** One diagram as drawn: its labels that spill out of their boxes, and its smallest text. */
interface DiagramReport {
  index: number;
  kind: string;
  labels: number;
  overflowing: string[];
  /** The smallest text of the diagram in CSS pixels as drawn (its font size times the drawing's scale). */
  minTextPx: number;
  /** The same text's font size at the diagram's natural size. */
  naturalMinTextPx: number;
  /** Whether the diagram offers a way to open it at full size. */
  fullSize: boolean;
}

/**
 * Runs in the page: measures every diagram under `selector` (each holding one mermaid SVG).
 * A label is the text of a foreignObject (flowchart and state labels) or an SVG `<text>` that sits
 * in a box (sequence actors and notes); its box is the node's shape and the foreignObject itself.
 * The text's extent is measured with a Range over its characters, so a clipped line still counts.
 */
function measureDiagrams(selector: string): DiagramReport[] {
  const tolerance = 1;
  type Box = { left: number; top: number; right: number; bottom: number };
  const inside = (a: Box, b: Box) =>
    a.left >= b.left - tolerance &&
    a.top >= b.top - tolerance &&
    a.right <= b.right + tolerance &&
    a.bottom <= b.bottom + tolerance;
  const union = (boxes: Box[]): Box | undefined =>
    boxes.length === 0
      ? undefined
      : {
          left: Math.min(...boxes.map((b) => b.left)),
          top: Math.min(...boxes.map((b) => b.top)),
          right: Math.max(...boxes.map((b) => b.right)),
          bottom: Math.max(...boxes.map((b) => b.bottom)),
        };
  const textBox = (el: Element): Box | undefined => {
    const range = document.createRange();
    range.selectNodeContents(el);
    const r = range.getBoundingClientRect();
    return r.width > 0 && r.height > 0 ? r : undefined;
  };
  const describe = (el: Element, text: Box, shape: Box) =>
    `"${(el.textContent ?? "").trim().slice(0, 40)}" text ${Math.round(text.top)}–${Math.round(text.bottom)} ` +
    `× ${Math.round(text.left)}–${Math.round(text.right)}, box ${Math.round(shape.top)}–${Math.round(shape.bottom)} ` +
    `× ${Math.round(shape.left)}–${Math.round(shape.right)}`;
  return [...document.querySelectorAll(selector)].map((container, index) => {
    const svg = container.querySelector("svg") as SVGSVGElement;
    const drawn = svg.getBoundingClientRect();
    const natural = svg.viewBox.baseVal?.width || drawn.width;
    const scale = drawn.width / natural;
    const overflowing: string[] = [];
    let labels = 0;
    for (const fo of svg.querySelectorAll("foreignObject")) {
      const text = textBox(fo);
      if (!text) continue;
      labels++;
      const frame = fo.getBoundingClientRect();
      if (!inside(text, frame)) overflowing.push(describe(fo, text, frame));
      const group = fo.closest("g.node, g.cluster");
      if (!group) continue;
      const shapes = [...group.querySelectorAll("rect, polygon, path, circle, ellipse")]
        .filter((s) => !s.closest("foreignObject, g.label, g.cluster-label"))
        .map((s) => s.getBoundingClientRect())
        .filter((r) => r.width > 0 && r.height > 0);
      const shape = union(shapes);
      if (shape && !inside(text, shape)) overflowing.push(describe(fo, text, shape));
    }
    for (const t of svg.querySelectorAll("text")) {
      const text = textBox(t);
      if (!text) continue;
      const cx = (text.left + text.right) / 2;
      const cy = (text.top + text.bottom) / 2;
      const box = [...(t.parentElement?.children ?? [])]
        .filter((c) => c.tagName.toLowerCase() === "rect")
        .map((c) => c.getBoundingClientRect())
        .find((r) => r.width > 0 && cx >= r.left && cx <= r.right && cy >= r.top && cy <= r.bottom);
      labels++;
      if (box && !inside(text, box)) overflowing.push(describe(t, text, box));
    }
    const sizes: number[] = [];
    for (const el of svg.querySelectorAll("*")) {
      if (["style", "title", "desc"].includes(el.tagName.toLowerCase())) continue;
      const ownText = [...el.childNodes].some((n) => n.nodeType === Node.TEXT_NODE && n.textContent?.trim());
      if (ownText) sizes.push(Number.parseFloat(getComputedStyle(el).fontSize));
    }
    const naturalMin = sizes.length ? Math.min(...sizes) : 0;
    const figure = container.closest(".diagram");
    return {
      index,
      kind: svg.getAttribute("aria-roledescription") ?? "",
      labels,
      overflowing,
      minTextPx: naturalMin * scale,
      naturalMinTextPx: naturalMin,
      fullSize: Boolean(figure?.querySelector(".diagram-open")),
    };
  });
}
