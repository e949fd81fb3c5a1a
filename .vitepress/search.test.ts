import { describe, expect, it } from "vitest";
import { pageSections } from "./search.ts";

describe("search sections", () => {
  it("cut a page at its headings, with the titles above each", () => {
    const html =
      '<h1 id="kvstore-ts" tabindex="-1">kvstore.ts <a class="header-anchor" href="#kvstore-ts">\u200b</a></h1>' +
      "<p>KVStore — the store.</p><pre><code>export class KVStore {}</code></pre>" +
      '<h2 id="more" tabindex="-1">More <a href="#more">\u200b</a></h2><p>compaction</p>';
    expect(pageSections(html)).toEqual([
      { anchor: "kvstore-ts", titles: ["kvstore.ts"], text: "KVStore — the store.export class KVStore {}" },
      { anchor: "more", titles: ["kvstore.ts", "More"], text: "compaction" },
    ]);
  });
});
