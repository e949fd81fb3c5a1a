/**
 * `mermaid` as the site's pages see it: a small stand-in that loads mermaid's own prebuilt ES module
 * build (served as static files, see mermaid-assets.ts) the first time a diagram is drawn.
 *
 * Solves: vitepress-plugin-mermaid imports `mermaid`, and bundling it (d3, dagre, cytoscape, katex,
 * langium … thousands of modules) was the largest part of the site's client bundle step, repeated
 * on every build although mermaid never changes. Mermaid ships a ready ES module build; the browser
 * loads it as it loaded the bundled one, only from files copied as they are.
 *
 * Invariants:
 * - mermaid is loaded after the window's `load` event: its own load handler would otherwise scan the
 *   still-empty `.mermaid` divs and draw a "Syntax error" diagram before the plugin renders the real
 *   one (the plugin renders every diagram itself), and `startOnLoad` is off before anything else runs;
 * - it is loaded once per page session, whatever the number of diagrams.
 *
 * @upstream none — course tooling (stands in for mermaid-js/mermaid packages/mermaid/src/mermaid.ts as vitepress-plugin-mermaid uses it)
 * @chapter 00-life-of-a-pod
 */
import type { ExternalDiagramDefinition, MermaidConfig, RenderResult } from "mermaid";

type Mermaid = {
  startOnLoad: boolean;
  initialize(config: MermaidConfig): void;
  render(id: string, text: string): Promise<RenderResult>;
  registerExternalDiagrams(
    diagrams: ExternalDiagramDefinition[],
    opts?: { lazyLoad?: boolean },
  ): Promise<void>;
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

let settings: MermaidConfig | undefined;

/** The part of mermaid's API that vitepress-plugin-mermaid calls. */
const mermaid = {
  startOnLoad: false,
  /** Kept and applied before each drawing, as the plugin initializes and renders in one go. */
  initialize(config: MermaidConfig): void {
    settings = config;
  },
  async render(id: string, text: string): Promise<RenderResult> {
    const m = await load();
    if (settings) m.initialize(settings);
    return m.render(id, text);
  },
  async registerExternalDiagrams(
    diagrams: ExternalDiagramDefinition[],
    opts?: { lazyLoad?: boolean },
  ): Promise<void> {
    const m = await load();
    return m.registerExternalDiagrams(diagrams, opts);
  },
};

export default mermaid;
