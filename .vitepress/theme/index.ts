/**
 * The site theme: VitePress's default theme plus a "see the code" footer on every page.
 *
 * @upstream none — course tooling
 * @chapter 00-life-of-a-pod
 */
import type { Theme } from "vitepress";
import DefaultTheme from "vitepress/theme";
import { h } from "vue";
import SeeTheCode from "./SeeTheCode.vue";
import "./style.css";

export default {
  extends: DefaultTheme,
  Layout: () => h(DefaultTheme.Layout, null, { "doc-footer-before": () => h(SeeTheCode) }),
} satisfies Theme;
