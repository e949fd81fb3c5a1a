/**
 * Code highlighting for the light and dark themes in ONE tokenizer pass instead of two.
 *
 * Solves: VitePress highlights every code block with shiki for two themes (github-light and
 * github-dark), and shiki runs the TextMate grammar once per theme — the regular-expression
 * matching, which is most of a site build's time once every file of code/ has its own page, is done
 * twice for the same scopes. The two GitHub themes have the same rules (the same scope selectors in
 * the same order, with the same font styles); only the colours differ. So a single "paired" theme,
 * whose rule N has a stand-in colour that names the pair (light colour of rule N, dark colour of
 * rule N), picks the same rule for every token as each theme would; one pass over the grammar, then
 * each stand-in colour is turned back into its pair. The HTML is the same, byte for byte, as
 * shiki's own two-theme output (`--shiki-light` / `--shiki-dark` variables on each token, the
 * `shiki-themes github-light github-dark` class on the `<pre>`), which the highlight test checks.
 *
 * Invariants:
 * - the paired theme is only used when the two themes' rules line up one to one (same scopes, same
 *   font styles); otherwise `pairedThemes` returns undefined and VitePress highlights as before;
 * - a token's two colours are exactly the ones each theme alone would give it.
 *
 * @upstream none — course tooling (works around shikijs/shiki packages/core/src/highlight/code-to-tokens-themes.ts, which tokenizes once per theme)
 * @chapter 00-life-of-a-pod
 */
import type { ShikiTransformer, ThemedToken, ThemeRegistration } from "shiki";

/** The part of a shiki highlighter used here, whatever languages and themes it was made with. */
interface Highlighter {
  loadTheme: (...themes: never[]) => Promise<void>;
  codeToHtml: (code: string, options: never) => string;
}

interface RawRule {
  scope?: string | string[];
  settings: { foreground?: string; background?: string; fontStyle?: string };
}
type RawTheme = ThemeRegistration & { tokenColors?: RawRule[]; colors?: Record<string, string> };

/** One paired colour: the stand-in the tokenizer sees and the two real colours it stands for. */
interface Pair {
  light: string;
  dark: string;
}

const sameScope = (a: RawRule, b: RawRule) => JSON.stringify(a.scope) === JSON.stringify(b.scope);

/**
 * The paired theme for `light` and `dark`, and the map from its stand-in colours back to the real
 * ones; undefined when the themes' rules do not line up one to one.
 */
export function pairedThemes(
  light: RawTheme,
  dark: RawTheme,
  name = "paired-light-dark",
): { theme: RawTheme & { name: string }; pairs: Map<string, Pair> } | undefined {
  const L = light.tokenColors ?? [];
  const D = dark.tokenColors ?? [];
  if (L.length !== D.length) return undefined;
  const pairs = new Map<string, Pair>();
  const byPair = new Map<string, string>();
  // TextMate upper-cases colours when it indexes them, so tokens come back upper-case: keys and
  // values are upper-case here too.
  const standIn = (l: string | undefined, d: string | undefined): string | undefined => {
    if (!l && !d) return undefined;
    if (!l || !d) throw new Error("unpaired colour");
    const pair = { light: l.toUpperCase(), dark: d.toUpperCase() };
    const key = `${pair.light}/${pair.dark}`;
    let colour = byPair.get(key);
    if (!colour) {
      colour = `#${(pairs.size + 1).toString(16).padStart(6, "0").toUpperCase()}`;
      byPair.set(key, colour);
      pairs.set(colour, pair);
    }
    return colour;
  };
  const rules: RawRule[] = [];
  try {
    for (let i = 0; i < L.length; i++) {
      const [l, d] = [L[i], D[i]];
      if (!sameScope(l, d) || (l.settings.fontStyle ?? "") !== (d.settings.fontStyle ?? "")) return undefined;
      const settings: RawRule["settings"] = {};
      const fg = standIn(l.settings.foreground, d.settings.foreground);
      if (fg) settings.foreground = fg;
      // Shiki does not put token backgrounds in its HTML, but TextMate splits tokens where the
      // background changes; pairing backgrounds too keeps the token boundaries of the two passes.
      const bg = standIn(l.settings.background, d.settings.background);
      if (bg) settings.background = bg;
      if (l.settings.fontStyle !== undefined) settings.fontStyle = l.settings.fontStyle;
      rules.push({ ...(l.scope !== undefined ? { scope: l.scope } : {}), settings });
    }
    const fg = standIn(light.colors?.["editor.foreground"], dark.colors?.["editor.foreground"]);
    const bg = standIn(light.colors?.["editor.background"], dark.colors?.["editor.background"]);
    if (!fg || !bg) return undefined;
    return {
      theme: {
        name,
        type: light.type,
        colors: { "editor.foreground": fg, "editor.background": bg },
        tokenColors: rules,
      } as RawTheme & { name: string },
      pairs,
    };
  } catch {
    return undefined;
  }
}

const fontStyles = [
  // Same bits and names as shiki's getTokenStyleObject.
  { bit: 1, key: "font-style", value: "italic", cls: "i" },
  { bit: 2, key: "font-weight", value: "bold", cls: "b" },
  { bit: 4, key: "text-decoration", value: "underline", cls: "u" },
] as const;

/** The style shiki gives a token in two-theme mode (`defaultColor: false`), from its one-pass token. */
function twoThemeStyle(token: ThemedToken, pair: Pair): Record<string, string> {
  const style: Record<string, string> = {};
  const fonts = fontStyles.filter((f) => (token.fontStyle ?? 0) & f.bit);
  for (const [variant, colour] of [
    ["light", pair.light],
    ["dark", pair.dark],
  ] as const) {
    style[`--shiki-${variant}`] = colour;
    for (const f of fonts) style[`--shiki-${variant}-${f.key}`] = f.value;
  }
  return style;
}

export interface OnePassHighlighting {
  /** For `markdown.shikiSetup`. */
  shikiSetup: (highlighter: Highlighter) => Promise<void>;
  /** The rules behind the token classes (`classes: true`); empty otherwise. */
  css: string;
}

/**
 * A `markdown.shikiSetup` for VitePress: loads the paired theme and makes the highlighter answer
 * two-theme requests (`themes: { light, dark }`) with one tokenizer pass. Requests for other theme
 * pairs, or when the themes do not pair, go to shiki unchanged.
 *
 * With `classes`, a token names its colour pair with a class (`sk4`, plus `ski`/`skb`/`sku` for
 * italic, bold, underline) whose rule in `css` sets the same `--shiki-light`/`--shiki-dark`
 * variables shiki would write inline: about 40 bytes less per token, and a site whose pages are
 * mostly highlighted code spends most of its build compiling and bundling those bytes.
 */
export function onePassDualTheme(
  light: RawTheme,
  dark: RawTheme,
  { classes = false } = {},
): OnePassHighlighting {
  const paired = pairedThemes(light, dark);
  const classOf = new Map([...(paired?.pairs.keys() ?? [])].map((c, i) => [c, `sk${i + 1}`]));
  const css =
    classes && paired
      ? [
          ...[...paired.pairs].map(
            ([c, p]) => `.vp-code .${classOf.get(c)}{--shiki-light:${p.light};--shiki-dark:${p.dark}}`,
          ),
          ...fontStyles.map(
            (f) => `.vp-code .sk${f.cls}{--shiki-light-${f.key}:${f.value};--shiki-dark-${f.key}:${f.value}}`,
          ),
        ].join("\n")
      : "";
  const shikiSetup = async (highlighter: Highlighter): Promise<void> => {
    if (paired) await highlighter.loadTheme(paired.theme as never);
    const themeClass = `shiki-themes ${light.name} ${dark.name}`;
    // What shiki puts on the <pre> in two-theme mode (VitePress removes it; other users may not).
    const rootStyle = [
      `--shiki-light:${light.colors?.["editor.foreground"]}`,
      `--shiki-dark:${dark.colors?.["editor.foreground"]}`,
      `--shiki-light-bg:${light.colors?.["editor.background"]}`,
      `--shiki-dark-bg:${dark.colors?.["editor.background"]}`,
    ].join(";");
    const restore: ShikiTransformer = {
      name: "course:paired-theme",
      tokens(lines) {
        for (const line of lines) {
          for (const token of line) {
            // Plain text (`txt`, unknown languages) has no colours in either theme.
            if (!token.color) continue;
            const colour = token.color.toUpperCase();
            const pair = paired?.pairs.get(colour);
            if (!pair) throw new Error(`paired theme: unknown colour ${token.color}`);
            if (css) {
              const fonts = fontStyles
                .filter((f) => (token.fontStyle ?? 0) & f.bit)
                .map((f) => ` sk${f.cls}`);
              token.htmlAttrs = { ...token.htmlAttrs, class: classOf.get(colour) + fonts.join("") };
              token.htmlStyle = {};
            } else {
              token.htmlStyle = twoThemeStyle(token, pair);
            }
          }
        }
      },
      pre(node) {
        if (!paired) return;
        node.properties.class = String(node.properties.class).replace(paired.theme.name, themeClass);
        node.properties.style = rootStyle;
      },
    };
    const codeToHtml = highlighter.codeToHtml.bind(highlighter);
    highlighter.codeToHtml = ((code: string, given: Record<string, unknown>) => {
      // Shiki gives up on a line after 500 ms and leaves its rest as one plain token; the first
      // block of a build (while the grammar's expressions compile) on a busy machine hits that, so
      // the highlighting depended on the machine's load. No limit: the same page every time.
      const options: Record<string, unknown> = { tokenizeTimeLimit: 0, ...given };
      const themes = options.themes as { light?: unknown; dark?: unknown } | undefined;
      const themeName = (t: unknown) => (typeof t === "string" ? t : (t as { name?: string })?.name);
      if (
        !paired ||
        !themes ||
        options.defaultColor !== false ||
        Object.keys(themes).length !== 2 ||
        themeName(themes.light) !== light.name ||
        themeName(themes.dark) !== dark.name
      ) {
        return codeToHtml(code, options as never);
      }
      const { themes: _t, defaultColor: _d, transformers = [], ...rest } = options;
      return codeToHtml(code, {
        ...rest,
        theme: paired.theme.name,
        transformers: [restore, ...(transformers as ShikiTransformer[])],
      } as never);
    }) as unknown as typeof highlighter.codeToHtml;
  };
  return { shikiSetup, css };
}
