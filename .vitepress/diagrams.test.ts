import { describe, expect, it } from "vitest";
import { diagramFences, fitScale, readablePx } from "./diagrams.ts";

describe("diagrams", () => {
  it("fit their column only as far as their text stays readable, and never grow", () => {
    // 982 px wide with 16 px text in a 624 px column: fits at 0.64 (10.2 px text).
    expect(fitScale({ naturalWidth: 982, columnWidth: 624, smallestTextPx: 16 })).toBeCloseTo(624 / 982);
    // 2,219 px wide: fitting would draw 4.5 px text; it stops at readablePx and scrolls instead.
    expect(fitScale({ naturalWidth: 2219, columnWidth: 624, smallestTextPx: 16 })).toBeCloseTo(
      readablePx / 16,
    );
    // Narrower than its column: drawn at its natural size, not blown up.
    expect(fitScale({ naturalWidth: 400, columnWidth: 624, smallestTextPx: 16 })).toBe(1);
    // Text already at or below readablePx: not shrunk at all.
    expect(fitScale({ naturalWidth: 2000, columnWidth: 390, smallestTextPx: 9 })).toBe(1);
    expect(fitScale({ naturalWidth: 0, columnWidth: 390, smallestTextPx: 16 })).toBe(1);
  });

  it("become the diagram component, with their source encoded; other fences are left alone", () => {
    const rules: Record<string, unknown> = { fence: () => "<pre>other</pre>" };
    diagramFences({ renderer: { rules } });
    const fence = rules.fence as (tokens: { info: string; content: string }[], idx: number) => string;
    const graph = 'flowchart LR\n  a["x & <y>"] --> b\n';
    expect(fence([{ info: "mermaid", content: graph }], 0)).toBe(
      `<MermaidDiagram id="mermaid-0" graph="${encodeURIComponent(graph)}" />\n`,
    );
    expect(fence([{ info: "ts", content: "x" }], 0)).toBe("<pre>other</pre>");
  });
});
