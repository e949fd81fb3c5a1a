// The worker and the prober together against a real HTTP server: a liveness probe that starts
// failing publishes Failure at failureThreshold, with one Unhealthy event per failed run, and
// then holds. The worker's timing runs on a fake clock; the probes are real requests.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, expect, it } from "vitest";
import type { Container, Pod, PodStatus } from "../../api/core.ts";
import { FakeClock } from "../../client/util/clock.ts";
import { waitFor } from "../../testing/wait-for.ts";
import { Prober } from "./prober.ts";
import { type Result, ResultsManager } from "./results/results-manager.ts";
import { Worker } from "./worker.ts";

let server: Server;
let port: number;
let healthy = true;
let hits = 0;
beforeAll(async () => {
  server = createServer((_req, res) => {
    hits++;
    res.writeHead(healthy ? 200 : 500).end();
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  port = (server.address() as AddressInfo).port;
});
afterAll(() => new Promise((r) => server.close(r)));

it("liveness: Success, two failed runs with events, Failure published, then on hold", async () => {
  const clock = new FakeClock(1_000_000);
  const container: Container = {
    name: "web",
    livenessProbe: {
      httpGet: { path: "/healthz", port },
      periodSeconds: 1,
      failureThreshold: 2,
      timeoutSeconds: 5,
    },
  };
  const pod: Pod = {
    metadata: { name: "web", namespace: "default", uid: "u1" },
    spec: { containers: [container] },
  };
  const status: PodStatus = {
    phase: "Running",
    podIP: "127.0.0.1",
    containerStatuses: [
      {
        name: "web",
        containerID: "containerd://w1",
        state: { running: { startedAt: new Date(clock.now()).toISOString() } },
        ready: true,
        restartCount: 0,
        image: "web",
        imageID: "",
        started: true,
      },
    ],
  };
  const events: string[] = [];
  const prober = new Prober({
    execSync: () => async () => ({ exitCode: 0, stdout: "", stderr: "" }),
    recordEvent: (_p, _c, _t, reason, message) => events.push(`${reason}: ${message}`),
  });
  const rm = new ResultsManager();
  const published: Result[] = [];
  rm.onUpdate((u) => published.push(u.result));
  const w = new Worker({
    probeType: "Liveness",
    pod,
    container,
    resultsManager: rm,
    getPodStatus: () => status,
    probe: (...args) => prober.probe(...args),
    clock,
    managerStart: 0,
  });
  const done = w.run();
  // Each tick: wait until the worker is parked on the clock, then move it one period.
  const tick = async () => {
    await waitFor("the worker to wait for its next tick", async () => clock.hasWaiters());
    clock.step(1000);
  };

  await waitFor("the first probe", async () => hits === 1);
  healthy = false;
  await tick();
  await waitFor("the first failed run", async () => events.length === 1);
  expect(published).toEqual(["Success"]); // below failureThreshold: nothing new published
  await tick();
  await waitFor("Failure to be published", async () => published.length === 2);
  expect(published).toEqual(["Success", "Failure"]);
  expect(events).toEqual([
    "Unhealthy: Liveness probe failed: HTTP probe failed with statuscode: 500",
    "Unhealthy: Liveness probe failed: HTTP probe failed with statuscode: 500",
  ]);
  await tick();
  await tick();
  expect(hits).toBe(3); // on hold until the kubelet replaces the container
  w.stop();
  await done;
  expect(rm.get("containerd://w1")).toBeUndefined();
});
