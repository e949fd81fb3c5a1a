/**
 * The live cluster view in a real browser (headless Chromium), against a real cluster: a
 * LocalCluster of separate processes — kube-apiserver (HTTPS, Node+RBAC), kube-controller-manager
 * and kube-scheduler with leader election on, one kubelet with the process runtime — so that
 * pods are really scheduled, started and reported Ready, Leases are really renewed, and the view
 * watches all of it through the admin's clientset, as `npm run cluster` gives it.
 *
 * The page is only ever driven by what the cluster does: the test changes the cluster through
 * the API and waits for the page to show it, and fails on any console error, page error or
 * failed request.
 */
import type { Browser, ConsoleMessage, Page, Request, Response } from "playwright-core";
import { chromium } from "playwright-core";
import { afterAll, beforeAll, expect, it } from "vitest";
import { describeWithTools } from "../../../../scripts/external-tools.ts";
import type { Pod } from "../../../api/core.ts";
import { LocalCluster } from "../../testing/local-cluster.ts";
import { type ClusterView, startClusterView } from "./server.ts";

/** Generous: the machine may be loaded (see the brief); every wait is on a condition. */
const clusterTimeoutMs = 120_000;

describeWithTools("the live cluster view in a browser", ["chromium"], (tools) => {
  let cluster: LocalCluster | undefined;
  let view: ClusterView | undefined;
  let browser: Browser | undefined;
  let page: Page;
  /** Console errors, page errors, failed and refused requests since the last check. */
  const problems: string[] = [];

  beforeAll(async () => {
    cluster = await LocalCluster.start({
      nodes: ["node-1"],
      // Upstream's default; LocalCluster turns it off for tests that do not need a leader.
      schedulerArgs: ["--leader-elect=true"],
      controllerManagerArgs: ["--leader-elect=true"],
    });
    view = await startClusterView({ client: cluster.admin });
    browser = await chromium.launch({
      executablePath: tools.chromium.path,
      args: [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--no-first-run",
        "--disable-background-networking",
      ],
    });
    page = await browser.newPage();
    page.on("console", (m: ConsoleMessage) => {
      if (m.type() === "error") problems.push(`console: ${m.text()} at ${m.location().url}`);
    });
    page.on("pageerror", (e: Error) => problems.push(`pageerror: ${e}`));
    page.on("requestfailed", (r: Request) =>
      problems.push(`requestfailed: ${r.url()} ${r.failure()?.errorText}`),
    );
    page.on("response", (r: Response) => {
      if (r.status() >= 400) problems.push(`response ${r.status()}: ${r.url()}`);
    });
  }, 300_000);

  afterAll(async () => {
    await browser?.close().catch(() => undefined);
    await view?.close().catch(() => undefined);
    await cluster?.close();
  }, 120_000);

  const pods = () => cluster!.admin.coreV1.pods("default");
  const pod = (name: string, extra: Partial<Pod["spec"]> = {}): Pod => ({
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name, namespace: "default" },
    spec: { containers: [{ name: "web", image: "course/web:1.0" }], ...extra },
  });

  it("renders the node, Ready, with the page live", async () => {
    await page.goto(view!.url, { waitUntil: "load" });
    await page.locator('#connection.live:text("live")').waitFor({ timeout: 30_000 });
    const node = page.locator('[data-node="node-1"]');
    await node.waitFor({ timeout: 30_000 });
    expect(await node.getAttribute("data-ready")).toBe("true");
    expect(await node.locator("[data-node-status]").textContent()).toBe("Ready");
    expect(problems).toEqual([]);
  }, 120_000);

  it("a created pod appears under its node and goes Running and Ready; deleted, it disappears", async () => {
    await pods().create(pod("view-web"));
    const shown = page.locator('[data-node="node-1"] [data-pod="default/view-web"]');
    await page
      .locator('[data-node="node-1"] [data-pod="default/view-web"][data-phase="Running"][data-ready="true"]')
      .waitFor({ timeout: clusterTimeoutMs });
    expect(await shown.locator(".pod-status").textContent()).toBe("Running");
    expect(await shown.locator(".pod-ready").textContent()).toBe("1/1");
    // Its life is in the events: the scheduler placed it, the kubelet started it.
    await page.locator('#events [data-reason="Scheduled"]').first().waitFor({ timeout: 30_000 });
    await page.locator('#events [data-reason="Started"]').first().waitFor({ timeout: 30_000 });

    await pods().delete("view-web");
    await page
      .locator('[data-pod="default/view-web"]')
      .waitFor({ state: "detached", timeout: clusterTimeoutMs });
    expect(problems).toEqual([]);
  }, 300_000);

  it("a pod no node fits waits under Pending, with the scheduler's FailedScheduling event", async () => {
    await pods().create(pod("view-nowhere", { nodeSelector: { "view-test": "no-such-node" } }));
    await page.locator('#pending [data-pod="default/view-nowhere"]').waitFor({ timeout: 30_000 });
    expect(await page.locator('[data-node="node-1"] [data-pod="default/view-nowhere"]').count()).toBe(0);
    await page.locator('#events [data-reason="FailedScheduling"]').first().waitFor({ timeout: 60_000 });
    await pods().delete("view-nowhere");
    await page.locator('[data-pod="default/view-nowhere"]').waitFor({ state: "detached", timeout: 60_000 });
    expect(problems).toEqual([]);
  }, 180_000);

  it("shows the node's Lease as a heartbeat and the scheduler's and controller-manager's as leaders", async () => {
    const heartbeat = page.locator('#heartbeats [data-lease="kube-node-lease/node-1"]');
    await heartbeat.waitFor({ timeout: 30_000 });
    expect(await heartbeat.getAttribute("data-holder")).toBe("node-1");
    expect(await heartbeat.getAttribute("data-state")).toBe("held");
    for (const name of ["kube-scheduler", "kube-controller-manager"]) {
      const leader = page.locator(`#leaders [data-lease="kube-system/${name}"]`);
      await leader.waitFor({ timeout: 60_000 });
      // The holder is the elector's identity (`<hostname>_<uuid>`), whatever it is: the Lease's.
      const lease = await cluster!.admin.coordinationV1.leases("kube-system").get(name);
      expect(await leader.getAttribute("data-holder")).toBe(lease.spec?.holderIdentity);
      expect(await leader.getAttribute("data-state")).toBe("held");
    }
    expect(problems).toEqual([]);
  }, 120_000);

  it("counts the watch events it receives, per resource", async () => {
    // Every change the tests above made reached the view as watch events.
    const pods = page.locator('#traffic [data-traffic="pods"]');
    await pods.waitFor({ timeout: 10_000 });
    expect(Number(await pods.getAttribute("data-total"))).toBeGreaterThan(0);
    for (const r of ["nodes", "leases", "events"]) {
      await page.locator(`#traffic [data-traffic="${r}"]`).waitFor({ timeout: 10_000 });
    }
    expect(problems).toEqual([]);
  }, 60_000);

  it("says it is disconnected when the server goes away, and comes back live when it returns", async () => {
    const url = new URL(view!.url);
    await view!.close();
    await page
      .locator('#connection.disconnected:text("disconnected, retrying")')
      .waitFor({ timeout: 30_000 });
    // What it shows is kept (greyed), not thrown away.
    expect(await page.locator('[data-node="node-1"]').count()).toBe(1);
    // The browser keeps trying while nothing listens: wait for one refused attempt.
    await page.waitForEvent("requestfailed", {
      predicate: (r) => /\/stream$/.test(r.url()),
      timeout: 30_000,
    });

    view = await startClusterView({ client: cluster!.admin, port: Number(url.port), host: url.hostname });
    await page.locator('#connection.live:text("live")').waitFor({ timeout: 30_000 });
    await page.locator('[data-node="node-1"][data-ready="true"]').waitFor({ timeout: 30_000 });
    // The only failures allowed are the reconnection attempts to the stream while it was down.
    const unexpected = problems.filter(
      (p) => !(/\/stream\b/.test(p) && /ERR_(CONNECTION_REFUSED|CONNECTION_RESET|EMPTY_RESPONSE)/.test(p)),
    );
    expect(unexpected).toEqual([]);
    problems.length = 0;
  }, 120_000);
});
