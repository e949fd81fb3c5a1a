import { chromium } from "playwright-core";
import { serveSite } from "/work/main/scripts/site.ts";
const site = await serveSite("/work/main/.vitepress/dist");
const browser = await chromium.launch({ executablePath: "/usr/bin/chromium", args: ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"] });
for (const [w, h, tag] of [[1440, 900, "desk"], [390, 844, "phone"]] as const) {
  const page = await browser.newPage({ viewport: { width: w, height: h } });
  for (const path of ["/docs/source/store/revision", "/chapters/01-etcd-watch/"]) {
    await page.goto(site.url + path, { waitUntil: "networkidle" });
    const ov = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    console.log(tag, path, "overflow", ov);
    await page.screenshot({ path: `/tmp/${tag}-${path.replace(/\W+/g, "_")}.png` });
  }
}
await browser.close(); site.server.close();
