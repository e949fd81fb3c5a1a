/**
 * The resource quota controller inside the controller-manager, against our API server over HTTP,
 * driven by the real kubectl: admission refuses the third pod of `pods=2` with upstream's message;
 * deleting a pod, or a pod turning Succeeded, gives its room back without a resync (the resync
 * period here is an hour, so only the monitors' replenishment can explain it); and a quota made
 * after the objects exist gets its usage counted.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { describeWithTools } from "../../../scripts/external-tools.ts";
import { type APIServer, startAPIServer } from "../../apiserver/server.ts";
import { plainKubectlEnv, runKubectl } from "../../apiserver/testing/kubectl-env.ts";
import { newForConfig } from "../../client/kubernetes/clientset.ts";
import { type RunningControllerManager, startControllerManager } from "../controller-manager.ts";

/** Polls `check` until it returns something other than undefined; fails after 20 s with the last value. */
async function eventually<T>(what: string, check: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const v = await check();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describeWithTools("the resource quota controller, driven by the real kubectl", ["kubectl"], () => {
  let dir: string;
  let server: APIServer;
  let manager: RunningControllerManager;
  let env: NodeJS.ProcessEnv;
  const logs: string[] = [];
  const kubectl = async (...args: string[]) => runKubectl(env, args);
  const ok = async (...args: string[]) => {
    const r = await kubectl(...args);
    if (r.code !== 0) throw new Error(`kubectl ${args.join(" ")}: ${r.err}`);
    return r.out;
  };
  /** `status.used[name]` of a quota, once the controller has written it. */
  const used = async (quota: string, name: string) => {
    const q = JSON.parse(await ok("get", "quota", quota, "-o", "json"));
    return q.status?.used?.[name] as string | undefined;
  };
  const usedBecomes = (quota: string, name: string, want: string) =>
    eventually(`${quota} used ${name}=${want}`, async () =>
      (await used(quota, name)) === want ? want : undefined,
    );

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "quotactl-test-"));
    // The default admission plugins, ResourceQuota among them.
    server = await startAPIServer({ insecurePort: 0, admission: {} });
    env = await plainKubectlEnv(dir, server.url);
    manager = await startControllerManager({
      client: newForConfig({ host: server.url, qps: -1 }),
      controllers: ["resourcequota-controller"],
      // An hour: a used count that drops within this test was replenished, not resynced.
      config: { resourceQuotaSyncPeriodMs: 3600_000 },
      log: (line) => logs.push(line),
    });
    expect(await manager.synced).toBe(true);
  });

  afterAll(async () => {
    await manager?.stop();
    await server?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it("refuses the third pod of pods=2, and gives a deleted or finished pod's room back at once", async () => {
    await ok("create", "quota", "q", "--hard=pods=2");
    // The controller fills status.used of a new quota (status.hard from spec.hard with it).
    await usedBecomes("q", "pods", "0");
    await ok("run", "p1", "--image=nginx", "--restart=Never");
    await ok("run", "p2", "--image=nginx", "--restart=Never");
    const third = await kubectl("run", "p3", "--image=nginx", "--restart=Never");
    expect(third.code).not.toBe(0);
    expect(third.err.trim()).toBe(
      'Error from server (Forbidden): pods "p3" is forbidden: exceeded quota: q, requested: pods=1, used: pods=2, limited: pods=2',
    );

    await ok("delete", "pod", "p1");
    await usedBecomes("q", "pods", "1");
    expect(await ok("get", "quota", "q", "--no-headers")).toMatch(/^q\s+\S+\s+pods: 1\/2\s*$/);

    // A finished pod holds no room either: the update filter sees it stop counting.
    await ok(
      "patch",
      "pod",
      "p2",
      "--subresource=status",
      "--type=merge",
      "-p",
      '{"status":{"phase":"Succeeded"}}',
    );
    await usedBecomes("q", "pods", "0");
    // …and the room is really there: two new pods are admitted.
    await ok("run", "p4", "--image=nginx", "--restart=Never");
    await ok("run", "p5", "--image=nginx", "--restart=Never");
  });

  it("counts what exists when a quota is made after the objects", async () => {
    // p2 (Succeeded), p4 and p5 exist; a finished pod still counts in count/pods, not in pods.
    await ok("create", "quota", "later", "--hard=pods=10,count/pods=10,services=4");
    await usedBecomes("later", "count/pods", "3");
    expect(await used("later", "pods")).toBe("2");
    const services = JSON.parse(await ok("get", "services", "-o", "json")).items.length;
    expect(await used("later", "services")).toBe(String(services));
    const q = JSON.parse(await ok("get", "quota", "later", "-o", "json"));
    expect(q.status.hard).toEqual({ pods: "10", "count/pods": "10", services: "4" });
    expect(logs).toContain('"Started controller" controller="resourcequota-controller"');
  });
});
