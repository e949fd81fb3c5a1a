import { readFileSync } from "node:fs";
import { join } from "node:path";
import githubDark from "@shikijs/themes/github-dark";
import githubLight from "@shikijs/themes/github-light";
import { createHighlighter } from "shiki";
import { describe, expect, it } from "vitest";
import { root } from "../scripts/course.ts";
import { onePassDualTheme, pairedThemes } from "./highlight.ts";

const themes = { light: "github-light", dark: "github-dark" };
// Real code of the course (comments, strings, template literals, regexes, types) plus plain text.
const samples: [string, string][] = [
  ["ts", readFileSync(join(root, "code", "store", "mvcc", "key-index.ts"), "utf8")],
  [
    "ts",
    [
      "const re = /a\\/b+/g;",
      "const t = `x $" + "{re.source} y`;",
      "type T<K extends string> = Record<K, number>;",
    ].join("\n"),
  ],
  ["json", '{ "kind": "Pod", "spec": { "nodeName": null, "replicas": 3 } }'],
  ["text", "just <text> & nothing else"],
];

const highlighter = () => createHighlighter({ themes: [githubLight, githubDark], langs: ["ts", "json"] });

describe("one-pass highlighting for the light and dark themes", () => {
  it("pairs the GitHub themes rule by rule", () => {
    const p = pairedThemes(githubLight, githubDark)!;
    expect(p).toBeDefined();
    expect(p.theme.tokenColors).toHaveLength(githubLight.tokenColors!.length);
    // The pairs are exactly the (light, dark) foreground colours of corresponding rules.
    const pairs = new Set([...p.pairs.values()].map((x) => `${x.light}/${x.dark}`));
    githubLight.tokenColors!.forEach((rule, i) => {
      const l = rule.settings.foreground;
      const d = githubDark.tokenColors![i].settings.foreground;
      if (l && d) expect(pairs).toContain(`${l.toUpperCase()}/${d.toUpperCase()}`);
    });
    // Themes whose rules do not line up are left to shiki's two passes.
    const shuffled = { ...githubDark, tokenColors: [...githubDark.tokenColors!].reverse() };
    expect(pairedThemes(githubLight, shuffled)).toBeUndefined();
  });

  it("gives the same HTML as shiki's two-theme output", async () => {
    const [plain, paired] = await Promise.all([highlighter(), highlighter()]);
    await onePassDualTheme(githubLight, githubDark).shikiSetup(paired);
    for (const [lang, code] of samples) {
      const options = { lang, themes, defaultColor: false as const, tokenizeTimeLimit: 0 };
      expect(paired.codeToHtml(code, options), lang).toBe(plain.codeToHtml(code, options));
    }
  });

  it("with classes, gives each token the colours shiki would give it inline", async () => {
    const [plain, paired] = await Promise.all([highlighter(), highlighter()]);
    const { shikiSetup, css } = onePassDualTheme(githubLight, githubDark, { classes: true });
    await shikiSetup(paired);
    const rules = new Map(
      [...css.matchAll(/\.vp-code \.(sk\w+)\{([^}]*)\}/g)].map((m) => [m[1], m[2].replace(/;$/, "")]),
    );
    for (const [lang, code] of samples) {
      const options = { lang, themes, defaultColor: false as const, tokenizeTimeLimit: 0 };
      const inline = plain.codeToHtml(code, options);
      const classed = paired.codeToHtml(code, options);
      expect(classed.length, lang).toBeLessThanOrEqual(inline.length);
      // Replace each class list by the declarations its rules hold: the inline HTML comes back.
      const expanded = classed.replace(/<span class="(sk[\w ]+)">/g, (_, list: string) => {
        const decls = list.split(" ").map((c) => {
          expect(rules.has(c), `rule for ${c}`).toBe(true);
          return rules.get(c)!;
        });
        // shiki writes each theme's colour, then its font styles: light first, then dark.
        const all = decls.join(";").split(";");
        const order = (d: string) => (d.startsWith("--shiki-light") ? 0 : 1);
        return `<span style="${all.sort((a, b) => order(a) - order(b)).join(";")}">`;
      });
      expect(expanded, lang).toBe(inline);
    }
  });
});
