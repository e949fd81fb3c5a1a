import { chromium } from "playwright-core";
import { serveSite } from "/work/main/scripts/site.ts";
import { listChapters, root } from "/work/main/scripts/course.ts";
const site = await serveSite("/work/main/.vitepress/dist");
const browser = await chromium.launch({ executablePath: "/usr/bin/chromium", args: ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"] });
const tab = await browser.newPage();
await tab.goto(site.url + "/", { waitUntil: "load" });
for (const chapter of listChapters(root)) {
  await tab.locator(".VPNavBarSearch button").first().click();
  const input = tab.locator(".VPLocalSearchBox input");
  await input.waitFor({ timeout: 10_000 });
  await input.fill(chapter.title);
  const hit = tab.locator(`.VPLocalSearchBox a[href*="/chapters/${chapter.dir}/"]`).first();
  await hit.waitFor({ timeout: 10_000 });
  console.log("found", chapter.title, await hit.getAttribute("href"));
  await tab.keyboard.press("Escape");
}
await browser.close(); site.server.close();
