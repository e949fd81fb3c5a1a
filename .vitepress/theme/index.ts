/**
 * The site theme: VitePress's default theme plus a "see the code" footer on every page, the
 * `<UpstreamBox chapter="…"/>` component chapter pages use for their "Upstream" section, the
 * `<CourseMap/>` of which chapters exist and which are coming (see ../course-plan.ts), and the
 * `<MermaidDiagram>` every ```` ```mermaid ```` block becomes (see ../diagrams.ts), and the
 * performance page's `<BenchFigures bench="…"/>` charts (see ../../docs/performance.data.ts).
 *
 * @upstream none — course tooling
 * @chapter 00-life-of-a-pod
 */
import type { Theme } from "vitepress";
import DefaultTheme from "vitepress/theme";
import { h } from "vue";
import BenchFigures from "./BenchFigures.vue";
import CourseMap from "./CourseMap.vue";
import MermaidDiagram from "./MermaidDiagram.vue";
import SeeTheCode from "./SeeTheCode.vue";
import UpstreamBox from "./UpstreamBox.vue";
import "./style.css";

export default {
  extends: DefaultTheme,
  Layout: () => h(DefaultTheme.Layout, null, { "doc-footer-before": () => h(SeeTheCode) }),
  enhanceApp({ app }) {
    app.component("UpstreamBox", UpstreamBox);
    app.component("CourseMap", CourseMap);
    // mermaid itself is loaded by ../mermaid-runtime.ts the first time a diagram draws.
    app.component("MermaidDiagram", MermaidDiagram);
    app.component("BenchFigures", BenchFigures);
  },
} satisfies Theme;
