/**
 * The site theme: VitePress's default theme plus a "see the code" footer on every page and the
 * `<UpstreamBox chapter="…"/>` component chapter pages use for their "Upstream" section.
 *
 * @upstream none — course tooling
 * @chapter 00-life-of-a-pod
 */
import mermaid from "mermaid";
import type { Theme } from "vitepress";
import DefaultTheme from "vitepress/theme";
import { h } from "vue";
import SeeTheCode from "./SeeTheCode.vue";
import UpstreamBox from "./UpstreamBox.vue";
import "./style.css";

export default {
  extends: DefaultTheme,
  Layout: () => h(DefaultTheme.Layout, null, { "doc-footer-before": () => h(SeeTheCode) }),
  enhanceApp({ app }) {
    app.component("UpstreamBox", UpstreamBox);
    // mermaid's own window-load handler would scan the still-empty `.mermaid` divs and draw a
    // "Syntax error" diagram before vitepress-plugin-mermaid renders the real one; the plugin
    // renders every diagram itself, so the automatic scan is turned off.
    mermaid.startOnLoad = false;
  },
} satisfies Theme;
