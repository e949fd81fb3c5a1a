/**
 * Drawing a diagram in the browser: mermaid's own prebuilt ES module build (served as static files,
 * see mermaid-assets.ts), loaded the first time a page draws a diagram.
 *
 * Solves: bundling mermaid (d3, dagre, cytoscape, katex, langium … thousands of modules) was the
 * largest part of the site's client bundle step, repeated on every build although mermaid never
 * changes. Mermaid ships a ready ES module build; the browser loads it from files copied as they are.
 *
 * Invariants:
 * - mermaid is loaded after the window's `load` event: its own load handler would otherwise scan
 *   the page for `.mermaid` elements and draw a "Syntax error" diagram into them before the
 *   component draws the real one, and `startOnLoad` is off before anything else runs;
 * - it is loaded once per page session, whatever the number of diagrams;
 * - drawings run one at a time, each with its own settings (mermaid's settings are global, and
 *   a theme switch redraws every diagram of the page at once);
 * - a diagram is laid out inside the element it will be shown in (`measureIn`): mermaid sizes
 *   each box from its label as laid out where it draws, so the label must be measured under the
 *   same style rules (the theme's line height for paragraphs, say) as it is shown under — a label
 *   measured in `<body>` and shown in the page's text column is cut off at the bottom of its box.
 *
 * @upstream none — course tooling (loads mermaid-js/mermaid packages/mermaid/src/mermaid.ts's prebuilt build)
 * @chapter 00-life-of-a-pod
 */
import type { MermaidConfig, RenderResult } from "mermaid";

type Mermaid = {
  startOnLoad: boolean;
  initialize(config: MermaidConfig): void;
  render(id: string, text: string, container?: Element): Promise<RenderResult>;
};

/** Where mermaid-assets.ts puts the prebuilt build, below the site's base. */
export const mermaidPath = "mermaid/mermaid.esm.min.mjs";

let loading: Promise<Mermaid> | undefined;
function load(): Promise<Mermaid> {
  loading ??= new Promise<void>((loaded) => {
    if (document.readyState === "complete") loaded();
    else window.addEventListener("load", () => loaded(), { once: true });
  })
    .then(() => {
      const base = (import.meta as { env?: { BASE_URL?: string } }).env?.BASE_URL ?? "/";
      return import(/* @vite-ignore */ `${base}${mermaidPath}`) as Promise<{ default: Mermaid }>;
    })
    .then(({ default: mermaid }) => {
      mermaid.startOnLoad = false;
      return mermaid;
    });
  return loading;
}

let queue: Promise<unknown> = Promise.resolve();

/**
 * The SVG markup of one diagram. `id` must be unique in the document while it draws;
 * `measureIn` is an empty, laid-out element in the place the diagram will be shown.
 */
export function renderDiagram(
  id: string,
  text: string,
  options: { dark: boolean; measureIn: Element },
): Promise<string> {
  const drawing = queue.then(async () => {
    const mermaid = await load();
    mermaid.initialize({
      startOnLoad: false,
      // Our own diagrams, from our own pages: labels may carry HTML such as <br/>.
      securityLevel: "loose",
      theme: options.dark ? "dark" : "default",
    });
    const { svg } = await mermaid.render(id, text, options.measureIn);
    return svg;
  });
  queue = drawing.catch(() => undefined);
  return drawing;
}
