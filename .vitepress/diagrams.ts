/**
 * Diagrams on the site: a ```` ```mermaid ```` block becomes a `<MermaidDiagram>` (theme/MermaidDiagram.vue),
 * drawn in the browser and sized so that a reader can read it.
 *
 * Solves: a diagram drawn to fit the text column shrinks with its width — a sequence diagram of
 * seven participants, 2,200 px wide, fitted into a 624 px column has 4.5 px text, and on a phone
 * 2.5 px. So a diagram is shrunk to fit only as far as its smallest text stays readable
 * (`readablePx`); wider than that it keeps that size and scrolls sideways, and any diagram drawn
 * smaller than its natural size offers "open full size" (a dialog with the diagram at 100 %).
 *
 * Invariants:
 * - a diagram is never drawn larger than its natural size, nor its text smaller than `readablePx`
 *   when its natural text is larger than that;
 * - the markdown holds the diagram's source (encoded in an attribute): the page and the search
 *   index carry no drawing, and the browser draws it in the reader's colour scheme.
 *
 * @upstream none — course tooling (replaces vitepress-plugin-mermaid's markdown rule and component)
 * @chapter 00-life-of-a-pod
 */

/** The smallest text size, in CSS pixels as drawn, that a diagram is shrunk to. */
export const readablePx = 10;

/**
 * The scale to draw a diagram at: 1 when it fits its column, else the larger of "fits the column"
 * and "its smallest text at `readablePx`" — never above 1.
 */
export function fitScale(d: { naturalWidth: number; columnWidth: number; smallestTextPx: number }): number {
  if (!(d.naturalWidth > 0) || !(d.columnWidth > 0)) return 1;
  const fits = d.columnWidth / d.naturalWidth;
  const readable = d.smallestTextPx > 0 ? readablePx / d.smallestTextPx : 0;
  return Math.min(1, Math.max(fits, readable));
}

interface FenceToken {
  info: string;
  content: string;
}
type FenceRule = (tokens: FenceToken[], idx: number, ...rest: never[]) => string;

/** The markdown-it rule: mermaid fences render as the diagram component, others as before. */
export function diagramFences(md: { renderer: { rules: Record<string, unknown> } }): void {
  const fence = md.renderer.rules.fence as FenceRule;
  md.renderer.rules.fence = ((tokens, idx, ...rest) => {
    const token = tokens[idx];
    if (token.info.trim() !== "mermaid") return fence(tokens, idx, ...rest);
    return `<MermaidDiagram id="mermaid-${idx}" graph="${encodeURIComponent(token.content)}" />\n`;
  }) satisfies FenceRule;
}
